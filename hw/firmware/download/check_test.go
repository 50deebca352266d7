package download_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestCheck_RefusesUnusableFileSourcesWithoutDownloading(t *testing.T) {
	base := t.TempDir()
	fw := filepath.Join(base, "firmware")
	if err := os.MkdirAll(filepath.Join(fw, "dir.fwpkg"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fw, "ok.fwpkg"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, artifactsim.Options{})
	remote := artifactsOf(t, "HTTP", s.Publish("p/remote.fwpkg", []byte("r")))[0]
	file := func(p string) manifest.Artifact {
		return manifest.Artifact{Name: filepath.Base(p), Source: manifest.Source{Kind: manifest.SourceFile, Path: p}}
	}
	d, _ := newDownloader(t, download.Options{SourceRoot: fw})
	if err := d.Check([]manifest.Artifact{remote, file("ok.fwpkg"), file(filepath.Join(fw, "ok.fwpkg"))}); err != nil {
		t.Fatal(err)
	}
	err := d.Check([]manifest.Artifact{remote, file("../escape.fwpkg"), file("absent.fwpkg"), file("dir.fwpkg")})
	var de *download.Error
	if !errors.As(err, &de) || de.Total != 4 || len(de.Failed) != 3 {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(de.Failed[0], confine.ErrEscapes) || !errors.Is(de.Failed[1], os.ErrNotExist) || de.Failed[2].Name != "dir.fwpkg" {
		t.Errorf("failures %v", de.Failed)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("Check contacted the server %d times", n)
	}
	noRoot, _ := newDownloader(t, download.Options{})
	if err := noRoot.Check([]manifest.Artifact{file("ok.fwpkg")}); !errors.Is(err, download.ErrUnsupportedSource) {
		t.Errorf("without a firmware directory: %v", err)
	}
}

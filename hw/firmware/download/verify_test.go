package download_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestDownload_ChecksumMismatchKeepsNothing(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.PublishPackage("p/simfw-bmc-2.0.fwpkg", "2.0", 300<<10)
	s.SetFault("p/simfw-bmc-2.0.fwpkg", artifactsim.Fault{WrongBytes: true})
	d, _ := newDownloader(t, download.Options{})
	dir := t.TempDir()
	results, err := d.Download(testCtx(t), dir, artifactsOf(t, "HTTP", a), hw.Secret{})
	var ce *download.ChecksumError
	if !errors.Is(err, download.ErrChecksum) || !errors.As(err, &ce) || ce.Want != a.Sha256 || ce.Got == a.Sha256 || len(ce.Got) != 64 {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(results[0].Err.Error(), "sha256 mismatch: got "+ce.Got+", want "+a.Sha256) {
		t.Errorf("message %q", results[0].Err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("left %q after a mismatch", f)
	}
}

func TestDownload_SizeLimit(t *testing.T) {
	const limit = 64 << 10
	tests := []struct {
		name  string
		size  int
		fault artifactsim.Fault
		want  string // "" = success
	}{
		{"at the limit", limit, artifactsim.Fault{}, ""},
		{"at the limit, no length", limit, artifactsim.Fault{NoLength: true}, ""},
		{"announced above the limit", limit + 1, artifactsim.Fault{}, "65537 bytes announced, max_artifact_bytes is 65536"},
		{"streamed above the limit", limit + 1, artifactsim.Fault{NoLength: true}, "more than 65536 bytes (max_artifact_bytes)"},
		{"streamed far above the limit", 50 * limit, artifactsim.Fault{NoLength: true}, "more than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, artifactsim.Options{})
			a := s.Publish("p/x.fwpkg", bytes.Repeat([]byte{7}, tt.size))
			s.SetFault("p/x.fwpkg", tt.fault)
			d, _ := newDownloader(t, download.Options{MaxArtifactBytes: limit})
			dir := t.TempDir()
			_, err := d.Download(testCtx(t), dir, artifactsOf(t, "HTTP", a), hw.Secret{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, download.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrTooLarge with %q", err, tt.want)
			}
			if f := files(t, dir); len(f) != 0 {
				t.Errorf("left %q", f)
			}
		})
	}
}

func TestDownload_SizeLimitAppliesToFileSources(t *testing.T) {
	fw := t.TempDir()
	body := bytes.Repeat([]byte{1}, 2000)
	if err := os.WriteFile(filepath.Join(fw, "big.fwpkg"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	d, _ := newDownloader(t, download.Options{SourceRoot: fw, MaxArtifactBytes: 1999})
	art := manifest.Artifact{Name: "big.fwpkg", Source: manifest.Source{Kind: manifest.SourceFile, Path: "big.fwpkg"}, Sha256: hex.EncodeToString(sum[:])}
	dir := t.TempDir()
	if _, err := d.Download(testCtx(t), dir, []manifest.Artifact{art}, hw.Secret{}); !errors.Is(err, download.ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Errorf("left %q", f)
	}
}

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
	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestDownload_FetchesVerifiesAndKeepsArtifacts(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	published := []artifactsim.Artifact{
		s.PublishPackage("sw-gb200/1.3.6/simfw-bmc-88.0002.1300.fwpkg", "88.0002.1300", 1<<10),
		s.PublishPackage("sw-gb200/1.3.6/simfw-cpld-0.1.0.6.fwpkg", "0.1.0.6", 100<<10),
		s.PublishPackage("sw-nvos/nvos-amd64-25.02.2553.bin", "25.02.2553", 1<<20),
	}
	arts := artifactsOf(t, "HTTP", published...)
	d, logs := newDownloader(t, download.Options{})
	dir := filepath.Join(t.TempDir(), "DGXGB200_1.0")
	ctx := testCtx(t)

	results, err := d.Download(ctx, dir, arts, hw.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		p := published[i]
		got, err := os.ReadFile(filepath.Join(dir, p.Name))
		if err != nil || r.Err != nil || r.Reused || r.Name != p.Name || r.Path != filepath.Join(dir, p.Name) || r.Size != p.Size {
			t.Fatalf("result %+v, read %v", r, err)
		}
		if !bytes.HasPrefix(got, []byte(sim.FirmwareMagic)) || int64(len(got)) != p.Size {
			t.Errorf("%s: %d bytes on disk", p.Name, len(got))
		}
	}
	if got, want := strings.Join(files(t, dir), " "),
		"nvos-amd64-25.02.2553.bin simfw-bmc-88.0002.1300.fwpkg simfw-cpld-0.1.0.6.fwpkg"; got != want {
		t.Errorf("cache holds %q, want only the artifacts", got)
	}
	if n := logs.count(`"message":"artifact downloaded and verified"`, `"elapsed_ms"`); n != 3 {
		t.Errorf("%d completion lines; logs:\n%s", n, logs)
	}

	var total int64
	for _, p := range published {
		total += p.Size
	}
	if got := d.BytesReceived(); got != total {
		t.Errorf("BytesReceived() = %d after the download, want %d", got, total)
	}

	// A second download finds everything cached and asks the server nothing.
	asked := len(s.Requests())
	results, err = d.Download(ctx, dir, arts, hw.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Reused || r.Err != nil {
			t.Errorf("not reused: %+v", r)
		}
	}
	if n := len(s.Requests()); n != asked {
		t.Errorf("%d more requests for cached artifacts", n-asked)
	}
	if got := d.BytesReceived(); got != total {
		t.Errorf("BytesReceived() = %d after a cached download, want %d still", got, total)
	}
}

func TestDownload_ReplacesACachedFileWithTheWrongDigest(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.PublishPackage("p/simfw-bmc-1.2.3.fwpkg", "1.2.3", 4096)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, a.Name), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, _ := newDownloader(t, download.Options{})
	results, err := d.Download(testCtx(t), dir, artifactsOf(t, "HTTP", a), hw.Secret{})
	if err != nil || results[0].Reused {
		t.Fatalf("%+v, %v", results, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, a.Name)); !bytes.Equal(got, sim.FirmwarePackage("1.2.3", 4096)) {
		t.Errorf("cache holds %d bytes, not the artifact", len(got))
	}
}

func TestDownload_AcceptsSha256InAnyCase(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/x.fwpkg", []byte("payload bytes"))
	d, _ := newDownloader(t, download.Options{})
	art := manifest.Artifact{Name: a.Name, Source: manifest.Source{Kind: manifest.SourceHTTP, URL: a.URL}, Sha256: strings.ToUpper(a.Sha256)}
	if _, err := d.Download(testCtx(t), t.TempDir(), []manifest.Artifact{art}, hw.Secret{}); err != nil {
		t.Fatal(err)
	}
}

func TestDownload_FileSourcesStayInsideTheFirmwareDirectory(t *testing.T) {
	base := t.TempDir()
	fwDir, outside := filepath.Join(base, "firmware"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(fwDir, "pkgs"), outside} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	body := sim.FirmwarePackage("25.03", 2048)
	for _, p := range []string{filepath.Join(fwDir, "pkgs", "local.fwpkg"), filepath.Join(outside, "local.fwpkg")} {
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "local.fwpkg"), filepath.Join(fwDir, "pkgs", "link.fwpkg")); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	fileArt := func(path string) manifest.Artifact {
		return manifest.Artifact{Name: "local.fwpkg", Source: manifest.Source{Kind: manifest.SourceFile, Path: path},
			Sha256: hex.EncodeToString(sum[:])}
	}
	d, _ := newDownloader(t, download.Options{SourceRoot: fwDir})
	ctx := testCtx(t)
	for _, ok := range []string{"pkgs/local.fwpkg", filepath.Join(fwDir, "pkgs", "local.fwpkg")} {
		dir := filepath.Join(t.TempDir(), "obj")
		if _, err := d.Download(ctx, dir, []manifest.Artifact{fileArt(ok)}, hw.Secret{}); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "local.fwpkg")); !bytes.Equal(got, body) {
			t.Errorf("%s: copy differs", ok)
		}
	}
	for _, escape := range []string{"../outside/local.fwpkg", filepath.Join(outside, "local.fwpkg"), "pkgs/link.fwpkg", "/etc/passwd"} {
		dir := filepath.Join(t.TempDir(), "obj")
		_, err := d.Download(ctx, dir, []manifest.Artifact{fileArt(escape)}, hw.Secret{})
		if !errors.Is(err, confine.ErrEscapes) {
			t.Errorf("%s: %v, want ErrEscapes", escape, err)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%s: left %q", escape, f)
		}
	}
	noRoot, _ := newDownloader(t, download.Options{})
	if _, err := noRoot.Download(ctx, t.TempDir(), []manifest.Artifact{fileArt("pkgs/local.fwpkg")}, hw.Secret{}); !errors.Is(err, download.ErrUnsupportedSource) {
		t.Errorf("file source without a firmware directory: %v", err)
	}
}

func TestDownload_RefusesArtifactNamesOutsideTheCache(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/x.fwpkg", []byte("payload"))
	base := t.TempDir()
	dir := filepath.Join(base, "cache")
	d, _ := newDownloader(t, download.Options{})
	tests := []struct {
		name string
		want error
	}{
		{"../escaped.fwpkg", confine.ErrEscapes},
		{filepath.Join(base, "escaped.fwpkg"), confine.ErrEscapes},
		{"sub/x.fwpkg", confine.ErrInvalidName},
		{"", confine.ErrInvalidName},
		{".", confine.ErrInvalidName},
	}
	for _, tt := range tests {
		art := manifest.Artifact{Name: tt.name, Source: manifest.Source{Kind: manifest.SourceHTTP, URL: a.URL}, Sha256: a.Sha256}
		if _, err := d.Download(testCtx(t), dir, []manifest.Artifact{art}, hw.Secret{}); !errors.Is(err, tt.want) {
			t.Errorf("name %q: %v, want %v", tt.name, err, tt.want)
		}
	}
	if got := files(t, base); strings.Join(got, " ") != "cache" {
		t.Errorf("files below the cache's parent: %q", got)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests for refused names", n)
	}
}

func TestDownload_NeedsAChecksum(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	a := s.Publish("p/x.fwpkg", []byte("payload"))
	d, _ := newDownloader(t, download.Options{})
	for _, sha := range []string{"", "abc", strings.Repeat("z", 64)} {
		art := manifest.Artifact{Name: a.Name, Source: manifest.Source{Kind: manifest.SourceHTTP, URL: a.URL}, Sha256: sha}
		if _, err := d.Download(testCtx(t), t.TempDir(), []manifest.Artifact{art}, hw.Secret{}); !errors.Is(err, download.ErrNoChecksum) {
			t.Errorf("sha %q: %v", sha, err)
		}
	}
}

func TestDownload_HTTPFailures(t *testing.T) {
	s := startServer(t, artifactsim.Options{})
	missing := s.Publish("p/missing.fwpkg", []byte("x"))
	broken := s.Publish("p/broken.fwpkg", []byte("x"))
	toFTP := s.Publish("p/to-ftp.fwpkg", []byte("x"))
	loop := s.Publish("p/loop.fwpkg", []byte("x"))
	s.SetFault("p/missing.fwpkg", artifactsim.Fault{Status: 404})
	s.SetFault("p/broken.fwpkg", artifactsim.Fault{Status: 500})
	s.SetFault("p/to-ftp.fwpkg", artifactsim.Fault{RedirectTo: "ftp://files.example.com/x.fwpkg"})
	s.SetFault("p/loop.fwpkg", artifactsim.Fault{RedirectTo: loop.URL})
	gone := startServer(t, artifactsim.Options{})
	closed := gone.Publish("p/closed.fwpkg", []byte("x"))
	gone.Close()

	d, _ := newDownloader(t, download.Options{})
	arts := artifactsOf(t, "HTTP", missing, broken, toFTP, loop, closed)
	results, err := d.Download(testCtx(t), t.TempDir(), arts, hw.Secret{})
	var de *download.Error
	if !errors.As(err, &de) || de.Total != 5 || len(de.Failed) != 5 {
		t.Fatalf("got %v", err)
	}
	tests := []struct {
		want error
		text string
	}{
		{download.ErrNotFound, "GET " + missing.URL + " returned HTTP 404"},
		{download.ErrHTTP, "returned HTTP 500"},
		{download.ErrRedirect, `redirect refused: to a "ftp" URL`},
		{download.ErrRedirect, "more than 10 redirects"},
		{download.ErrTransport, "transport error: GET " + closed.URL},
	}
	for i, tt := range tests {
		if e := results[i].Err; !errors.Is(e, tt.want) || !strings.Contains(e.Error(), tt.text) ||
			!strings.HasPrefix(e.Error(), "artifact "+arts[i].Name+" from ") {
			t.Errorf("%s: %v; want %v mentioning %q", arts[i].Name, e, tt.want, tt.text)
		}
	}
	if !errors.Is(err, download.ErrNotFound) || !strings.HasPrefix(err.Error(), "download: 5 of 5 artifacts failed: artifact missing.fwpkg") {
		t.Errorf("joined error %v", err)
	}
}

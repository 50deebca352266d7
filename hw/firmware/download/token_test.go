package download_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestAccessToken_NOAUTHAndBlankMeanNone(t *testing.T) {
	tests := []struct {
		give string
		want string // revealed; "" = none
	}{
		{"", ""},
		{"   \t\n", ""},
		{"NOAUTH", ""},
		{" NOAUTH ", ""},
		{"noauth", "noauth"},
		{"AKCp8-token", "AKCp8-token"},
		{" AKCp8-token ", " AKCp8-token "},
	}
	for _, tt := range tests {
		got := download.AccessToken(tt.give)
		if got.Reveal() != tt.want || got.IsZero() != (tt.want == "") {
			t.Errorf("AccessToken(%q) = %q", tt.give, got.Reveal())
		}
	}
}

func TestToken_SentOnlyToArtifactorySources(t *testing.T) {
	const token = "AKCp8-sent-only-to-artifactory-1"
	s := startServer(t, artifactsim.Options{Token: hw.NewSecret(token)})
	a := s.Publish("artifactory/r/p.fwpkg", []byte("payload"))
	// The simulated server is plain http: these tests are about where the
	// token goes, so they allow it there (insecure_test.go covers refusing).
	d, _ := newDownloader(t, download.Options{AllowInsecureToken: true})
	ctx := testCtx(t)
	tests := []struct {
		name         string
		locationType string
		token        hw.Secret
		wantSent     bool
		wantErr      string
	}{
		{"artifactory with the token", "artifactory", hw.NewSecret(token), true, ""},
		{"jfrog with the token", "JFrog", hw.NewSecret(token), true, ""},
		{"https never carries it", "HTTP", hw.NewSecret(token), false, "returned HTTP 401 (no access token was sent)"},
		{"NOAUTH sends none", "artifactory", download.AccessToken("NOAUTH"), false, "(no access token was sent)"},
		{"a wrong token", "artifactory", hw.NewSecret("not-the-token"), true, "returned HTTP 401 (an access token was sent)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Requests())
			_, err := d.Download(ctx, t.TempDir(), artifactsOf(t, tt.locationType, a), tt.token)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (!errors.Is(err, download.ErrUnauthorized) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want ErrUnauthorized with %q", err, tt.wantErr)
			}
			reqs := s.Requests()[before:]
			if len(reqs) != 1 || reqs[0].TokenSent != tt.wantSent {
				t.Fatalf("requests %+v, want one with TokenSent=%v", reqs, tt.wantSent)
			}
		})
	}
}

func TestToken_DroppedOnRedirectToAnotherHost(t *testing.T) {
	const token = "AKCp8-redirect-token-2"
	origin := startServer(t, artifactsim.Options{Token: hw.NewSecret(token)})
	cdn := startServer(t, artifactsim.Options{})
	onCDN := cdn.Publish("blobs/p.fwpkg", []byte("payload"))
	moved := origin.Publish("artifactory/r/moved.fwpkg", []byte("payload"))
	origin.SetFault("artifactory/r/moved.fwpkg", artifactsim.Fault{RedirectTo: onCDN.URL})
	sameHost := origin.Publish("artifactory/r/same.fwpkg", []byte("other"))
	target := origin.Publish("artifactory/r/target.fwpkg", []byte("other"))
	origin.SetFault("artifactory/r/same.fwpkg", artifactsim.Fault{RedirectTo: target.URL})

	d, _ := newDownloader(t, download.Options{AllowInsecureToken: true})
	arts := artifactsOf(t, "artifactory", moved, sameHost)
	if _, err := d.Download(testCtx(t), t.TempDir(), arts, hw.NewSecret(token)); err != nil {
		t.Fatal(err)
	}
	if r := cdn.Requests(); len(r) != 1 || r[0].TokenSent {
		t.Errorf("the other host saw %+v; the token must not follow a redirect there", r)
	}
	sent := map[string]bool{}
	for _, r := range origin.Requests() {
		sent[r.Path] = r.TokenSent
	}
	if !sent["/artifactory/r/target.fwpkg"] {
		t.Errorf("a redirect on the same host must keep the token: %+v", origin.Requests())
	}
}

func TestToken_NeverInLogsErrorsOrFiles(t *testing.T) {
	const token = "AKCp8-never-printed-3f9c"
	good := startServer(t, artifactsim.Options{Token: hw.NewSecret(token)})
	other := startServer(t, artifactsim.Options{Token: hw.NewSecret("a-different-token")})
	cdn := startServer(t, artifactsim.Options{})
	ok := good.PublishPackage("artifactory/r/simfw-bmc-1.0.1.fwpkg", "1.0.1", 256<<10)
	refused := other.Publish("artifactory/r/refused.fwpkg", []byte("x"))
	corrupt := good.Publish("artifactory/r/corrupt.fwpkg", []byte("corrupt me"))
	good.SetFault("artifactory/r/corrupt.fwpkg", artifactsim.Fault{WrongBytes: true})
	stalled := good.Publish("artifactory/r/stalled.fwpkg", []byte("stalled body"))
	good.SetFault("artifactory/r/stalled.fwpkg", artifactsim.Fault{Stall: true, StallAfter: 4})
	onCDN := cdn.Publish("blobs/redirected.fwpkg", []byte("moved"))
	redirected := good.Publish("artifactory/r/redirected.fwpkg", []byte("moved"))
	good.SetFault("artifactory/r/redirected.fwpkg", artifactsim.Fault{RedirectTo: onCDN.URL})

	// The stall timeout also bounds the healthy transfers: short enough for
	// the stalled one to fail soon, long enough that a loaded machine never
	// fails a healthy one.
	d, logs := newDownloader(t, download.Options{StallTimeout: time.Second, AllowInsecureToken: true})
	dir := t.TempDir()
	secret := hw.NewSecret(token)
	results, err := d.Download(testCtx(t), dir, artifactsOf(t, "artifactory", ok, refused, corrupt, stalled, redirected), secret)
	if err == nil || results[0].Err != nil || results[4].Err != nil {
		t.Fatalf("want only the refused, corrupt and stalled artifacts to fail: %+v, %v", results, err)
	}
	if n := good.Requests(); !n[0].TokenSent {
		t.Fatal("the token was not sent at all, so this test proves nothing")
	}
	texts := map[string]string{
		"logs":                  logs.String(),
		"error":                 err.Error(),
		"results %+v":           fmt.Sprintf("%+v", results),
		"results %#v":           fmt.Sprintf("%#v", results),
		"downloader %+v":        fmt.Sprintf("%+v", d),
		"options %+v":           fmt.Sprintf("%+v", download.Options{}),
		"token %v %s %q %#v %x": fmt.Sprintf("%v %s %q %#v %x", secret, secret, secret, secret, secret),
	}
	if !strings.Contains(texts["logs"], "artifact downloaded and verified") {
		t.Fatalf("nothing logged, so the log check proves nothing:\n%s", texts["logs"])
	}
	err = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		texts["file "+e.Name()] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 9 {
		t.Fatalf("want the two downloaded files checked, have %d texts", len(texts))
	}
	for what, text := range texts {
		if strings.Contains(text, token) {
			t.Errorf("%s shows the token: %s", what, text)
		}
	}
}

func TestDownload_TokenlessSourcesIgnoreTheToken(t *testing.T) {
	fw := t.TempDir()
	if err := os.WriteFile(filepath.Join(fw, "p.fwpkg"), []byte("local"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, _ := newDownloader(t, download.Options{SourceRoot: fw, AllowInsecureToken: true})
	art := manifest.Artifact{Name: "p.fwpkg", Source: manifest.Source{Kind: manifest.SourceFile, Path: "p.fwpkg"},
		Sha256: "25bf8e1a2393f1108d37029b3df5593236c755742ec93465bbafa9b290bddcf6"}
	if _, err := d.Download(testCtx(t), t.TempDir(), []manifest.Artifact{art}, hw.NewSecret("unused")); err != nil {
		t.Fatal(err)
	}
}

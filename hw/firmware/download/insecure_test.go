package download_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// An access token never goes over plain http by default: the download is
// refused before any request, saying how to allow it; with
// AllowInsecureToken it goes, and the log warns that it did (without the
// token).
func TestToken_RefusedOverPlainHTTPUnlessAllowed(t *testing.T) {
	const token = "AKCp8-plain-http-token-9"
	s := startServer(t, artifactsim.Options{Token: hw.NewSecret(token)})
	a := s.Publish("artifactory/r/p.fwpkg", []byte("payload"))
	strict, _ := newDownloader(t, download.Options{})
	_, err := strict.Download(testCtx(t), t.TempDir(), artifactsOf(t, "artifactory", a), hw.NewSecret(token))
	if !errors.Is(err, download.ErrInsecureToken) || !strings.Contains(err.Error(), "allow_insecure_artifact_token") ||
		strings.Contains(err.Error(), token) {
		t.Fatalf("got %v, want ErrInsecureToken naming allow_insecure_artifact_token", err)
	}
	if reqs := s.Requests(); len(reqs) != 0 {
		t.Fatalf("a refused download made requests: %+v", reqs)
	}
	allowed, logs := newDownloader(t, download.Options{AllowInsecureToken: true})
	if _, err := allowed.Download(testCtx(t), t.TempDir(), artifactsOf(t, "artifactory", a), hw.NewSecret(token)); err != nil {
		t.Fatal(err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || !reqs[0].TokenSent {
		t.Fatalf("requests %+v, want one with the token", reqs)
	}
	if out := logs.String(); !strings.Contains(out, "access token sent over plain http") || strings.Contains(out, token) {
		t.Fatalf("log %q: want the warning, without the token", out)
	}
}

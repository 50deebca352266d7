package artifactsim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

func TestPublish_ServesTheBytesAndDescribesThem(t *testing.T) {
	s := start(t, artifactsim.Options{})
	body := bytes.Repeat([]byte("firmware"), 10000)
	a := s.Publish("/artifactory/sw-gb200/1.3.6/my pkg.fwpkg", body)
	sum := sha256.Sum256(body)
	if a.Name != "my pkg.fwpkg" || a.Path != "artifactory/sw-gb200/1.3.6/my pkg.fwpkg" || a.Size != int64(len(body)) ||
		a.Sha256 != hex.EncodeToString(sum[:]) || a.URL != s.URL()+"/artifactory/sw-gb200/1.3.6/my%20pkg.fwpkg" {
		t.Fatalf("artifact %+v", a)
	}
	resp, got, err := get(t, testCtx(t), a.URL)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) || resp.ContentLength != a.Size {
		t.Fatalf("GET = %v, %d bytes, length %d, %v", resp.Status, len(got), resp.ContentLength, err)
	}
	if resp, _, err := get(t, testCtx(t), s.URL()+"/artifactory/absent.fwpkg"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unpublished: %v %v", resp.Status, err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Status != 200 || reqs[1].Status != 404 || reqs[0].TokenSent {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestPublishPackage_IsASimulatorFirmwarePackage(t *testing.T) {
	s := start(t, artifactsim.Options{})
	a := s.PublishPackage("nvfw/simfw-bmc-88.0002.1300.fwpkg", "88.0002.1300", 4096)
	_, got, err := get(t, testCtx(t), a.URL)
	if err != nil || !bytes.Equal(got, sim.FirmwarePackage("88.0002.1300", 4096)) {
		t.Fatalf("served %d bytes (%v), not sim.FirmwarePackage", len(got), err)
	}
}

func TestToken_RequiredWhenSet(t *testing.T) {
	const token = "AKCp8-artifactsim-token-77"
	var logs bytes.Buffer
	s := start(t, artifactsim.Options{Token: hw.NewSecret(token), Logger: zerolog.New(&logs).Level(zerolog.DebugLevel)})
	a := s.Publish("r/p.fwpkg", []byte("payload"))
	ctx := testCtx(t)
	for _, tt := range []struct {
		header []string
		want   int
	}{
		{nil, http.StatusUnauthorized},
		{[]string{artifactsim.TokenHeader, "wrong"}, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer " + token}, http.StatusUnauthorized},
		{[]string{artifactsim.TokenHeader, token}, http.StatusOK},
	} {
		resp, _, err := get(t, ctx, a.URL, tt.header...)
		if err != nil || resp.StatusCode != tt.want {
			t.Errorf("header %v: %v %v, want %d", tt.header, resp.Status, err, tt.want)
		}
	}
	var sent []bool
	for _, r := range s.Requests() {
		sent = append(sent, r.TokenSent)
	}
	if want := []bool{false, true, false, true}; !equalBools(sent, want) {
		t.Errorf("TokenSent %v, want %v", sent, want)
	}
	if !strings.Contains(logs.String(), "artifact request") || strings.Contains(logs.String(), token) {
		t.Errorf("logs (must show requests, never the token): %s", logs.String())
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDir_ServesFilesBelowItOnly(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(dir, "fw"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fw", "a.fwpkg"), []byte("from disk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "secret"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s := start(t, artifactsim.Options{Dir: dir})
	ctx := testCtx(t)
	if resp, b, err := get(t, ctx, s.URL()+"/fw/a.fwpkg"); err != nil || resp.StatusCode != 200 || string(b) != "from disk" {
		t.Fatalf("file below Dir: %v %q %v", resp.Status, b, err)
	}
	for _, p := range []string{"/link", "/fw", "/%2e%2e/secret"} {
		if resp, b, err := get(t, ctx, s.URL()+p); err != nil || resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), "outside") {
			t.Errorf("%s: %v %q %v", p, resp.Status, b, err)
		}
	}
}

func TestFault_ChangesWhatIsServed(t *testing.T) {
	body := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 20000)
	tests := []struct {
		name  string
		fault artifactsim.Fault
		check func(t *testing.T, resp *http.Response, got []byte)
	}{
		{"404", artifactsim.Fault{Status: http.StatusNotFound}, func(t *testing.T, resp *http.Response, _ []byte) {
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("status %s", resp.Status)
			}
		}},
		{"503", artifactsim.Fault{Status: http.StatusServiceUnavailable}, func(t *testing.T, resp *http.Response, _ []byte) {
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("status %s", resp.Status)
			}
		}},
		{"wrong bytes", artifactsim.Fault{WrongBytes: true}, func(t *testing.T, resp *http.Response, got []byte) {
			if resp.StatusCode != 200 || len(got) != len(body) || bytes.Equal(got, body) {
				t.Errorf("status %s, %d bytes, equal=%v", resp.Status, len(got), bytes.Equal(got, body))
			}
		}},
		{"no length", artifactsim.Fault{NoLength: true}, func(t *testing.T, resp *http.Response, got []byte) {
			if resp.ContentLength != -1 || !bytes.Equal(got, body) {
				t.Errorf("length %d, %d bytes", resp.ContentLength, len(got))
			}
		}},
		{"throttled", artifactsim.Fault{Throttle: time.Millisecond, ChunkBytes: 16 << 10}, func(t *testing.T, resp *http.Response, got []byte) {
			if !bytes.Equal(got, body) {
				t.Errorf("%d bytes", len(got))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, artifactsim.Options{})
			a := s.Publish("p.bin", body)
			s.SetFault("p.bin", tt.fault)
			resp, got, err := get(t, testCtx(t), a.URL)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, resp, got)
			s.SetFault("p.bin", artifactsim.Fault{})
			if _, again, err := get(t, testCtx(t), a.URL); err != nil || !bytes.Equal(again, body) {
				t.Errorf("the zero Fault does not restore service: %d bytes, %v", len(again), err)
			}
		})
	}
}

func TestFault_Redirect(t *testing.T) {
	s := start(t, artifactsim.Options{})
	target := s.Publish("new/p.bin", []byte("moved"))
	old := s.Publish("old/p.bin", []byte("stale"))
	s.SetFault("old/p.bin", artifactsim.Fault{RedirectTo: target.URL})
	if resp, b, err := get(t, testCtx(t), old.URL); err != nil || resp.StatusCode != 200 || string(b) != "moved" {
		t.Fatalf("%v %q %v", resp.Status, b, err)
	}
	if r := s.Requests(); len(r) != 2 || r[0].Status != http.StatusFound || r[1].Path != "/new/p.bin" {
		t.Fatalf("requests %+v", r)
	}
}

func TestFault_StallSendsThePrefixThenNothing(t *testing.T) {
	s := start(t, artifactsim.Options{})
	a := s.Publish("p.bin", bytes.Repeat([]byte("x"), 100000))
	s.SetFault("p.bin", artifactsim.Fault{Stall: true, StallAfter: 1000})
	// The prefix is awaited without a time limit of its own; only the wait
	// for more is bounded, and a correct server never sends more however
	// long the client waits, so this cannot fail spuriously under load.
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil || resp.ContentLength != 100000 {
		t.Fatalf("the 1000-byte prefix of %d bytes: %v", resp.ContentLength, err)
	}
	stop := time.AfterFunc(300*time.Millisecond, cancel)
	defer stop.Stop()
	rest, err := io.ReadAll(resp.Body)
	if !errors.Is(err, context.Canceled) || len(rest) != 0 {
		t.Fatalf("read %d bytes after the prefix, %v; want none, then the client giving up", len(rest), err)
	}
}

func TestHold_CountsRequestsUntilReleased(t *testing.T) {
	s := start(t, artifactsim.Options{})
	a := s.Publish("p.bin", []byte("held"))
	s.SetFault("p.bin", artifactsim.Fault{Hold: true})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	bodies := make([]string, 3)
	for i := range bodies {
		wg.Go(func() {
			if _, b, err := get(t, ctx, a.URL); err == nil {
				bodies[i] = string(b)
			}
		})
	}
	if err := s.WaitHeld(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if s.Held() != 3 || s.InFlight() != 3 {
		t.Fatalf("held %d, in flight %d", s.Held(), s.InFlight())
	}
	s.Release(3)
	wg.Wait()
	if strings.Join(bodies, ",") != "held,held,held" || s.MaxInFlight() != 3 || s.InFlight() != 0 || s.Held() != 0 {
		t.Fatalf("bodies %q, max %d, in flight %d, held %d", bodies, s.MaxInFlight(), s.InFlight(), s.Held())
	}
}

func TestClose_EndsHeldAndStalledRequests(t *testing.T) {
	s, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held := s.Publish("held.bin", []byte("never"))
	stalled := s.Publish("stalled.bin", bytes.Repeat([]byte("y"), 5000))
	s.SetFault("held.bin", artifactsim.Fault{Hold: true})
	s.SetFault("stalled.bin", artifactsim.Fault{Stall: true, StallAfter: 10})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, url := range []string{held.URL, stalled.URL} {
		wg.Go(func() { _, _, errs[i] = get(t, ctx, url) })
	}
	if err := s.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Both requests must be in the server before it closes: one arriving
	// after Close is answered 503, which proves nothing about stalls.
	for s.InFlight() < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("the stalled request never reached the server")
		case <-time.After(time.Millisecond):
		}
	}
	s.Close()
	wg.Wait()
	if errs[1] == nil {
		t.Error("the stalled download completed")
	}
	if err := s.WaitHeld(ctx, 5); !errors.Is(err, artifactsim.ErrClosed) {
		t.Errorf("WaitHeld after Close = %v", err)
	}
	s.Close() // idempotent
}

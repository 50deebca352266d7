package catalog_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
)

func TestOpen_ReverifiesTheObjectsARestartInterrupted(t *testing.T) {
	// Two held transfers from the one artifact server would take both of
	// the default two slots per host and keep every other artifact
	// waiting: allow four, so two stay free for them.
	fx := newFixture(t, fixtureOptions{perHost: 4})
	complete := fx.publish(simrelease.Options{Milestone: "complete"})
	partial := fx.publish(simrelease.Options{Milestone: "partial"})
	broken := fx.publish(simrelease.Options{Milestone: "broken"})
	ready := fx.publish(simrelease.Options{Milestone: "ready"})
	fx.srv.SetFault(complete.HMC.Path, artifactsim.Fault{Hold: true})
	fx.srv.SetFault(partial.HMC.Path, artifactsim.Fault{Hold: true})
	fx.srv.SetFault(broken.SwitchCPLD.Path, artifactsim.Fault{WrongBytes: true})
	for _, rel := range []simrelease.Release{complete, partial, broken, ready} {
		fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	}
	brokenBefore := fx.waitObject(broken.ID, "failed", failed)
	readyBefore := fx.waitObject(ready.ID, "available", available)
	if err := fx.srv.WaitHeld(testCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	fx.close()        // rmsd stops with two downloads under way
	fx.waitReleased() // and the server has recorded their requests

	// The held package of one object had landed just before the stop; the
	// other object's is a corrupt leftover, beside a temporary file.
	fx.srv.SetFault(complete.HMC.Path, artifactsim.Fault{})
	writeCached(t, fx.dir, complete.ID, complete.HMC.Name, fetch(t, complete.HMC.URL))
	writeCached(t, fx.dir, partial.ID, partial.HMC.Name, []byte("half a package"))
	stray := writeCached(t, fx.dir, partial.ID, "."+partial.HMC.Name+".part-0123456789abcdef", []byte("half"))
	requests := len(fx.srv.Requests())

	fx.open()
	got := fx.waitObject(complete.ID, "available", available)
	for _, a := range got.Artifacts {
		if a.State != store.ArtifactReady || a.LocalPath != filepath.Join(fx.dir, "objects", complete.ID, a.Name) {
			t.Errorf("%s: artifact %+v", complete.ID, a)
		}
	}
	got = fx.waitObject(partial.ID, "failed", failed)
	for _, want := range []string{"interrupted by a restart of rmsd before " + partial.HMC.Name + " was cached and verified",
		"the access token is never stored, so delete the object and add it again"} {
		if !strings.Contains(got.UnavailableReason, want) {
			t.Errorf("reason %q lacks %q", got.UnavailableReason, want)
		}
	}
	for _, a := range got.Artifacts {
		want := store.ArtifactReady
		if a.Name == partial.HMC.Name {
			want = store.ArtifactFailed
			if !strings.Contains(a.Error, "not verified after a restart: sha256 mismatch") {
				t.Errorf("error of the corrupt artifact: %q", a.Error)
			}
		}
		if a.State != want {
			t.Errorf("%s: artifact %s is %s, want %s", partial.ID, a.Name, a.State, want)
		}
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("temporary file not reaped at start: %v", err)
	}
	if n := len(fx.srv.Requests()); n != requests {
		t.Errorf("the restart fetched %d artifacts; it must only verify what is cached", n-requests)
	}
	// Objects whose download had ended are left as they were.
	for _, before := range []store.FirmwareObject{brokenBefore, readyBefore} {
		if after := fx.get(before.ID); after.Available != before.Available || after.UnavailableReason != before.UnavailableReason ||
			!after.Updated.Equal(before.Updated) {
			t.Errorf("%s changed at start:\n%+v\nwas\n%+v", before.ID, after, before)
		}
	}
	// The warning follows the store update waitObject saw.
	if l := fx.waitLog("interrupted by a restart", partial.ID, `"level":"warn"`); len(l) != 1 {
		t.Errorf("want one warning about %s, got %q", partial.ID, l)
	}
}

func writeCached(t *testing.T, firmwareDir, id, name string, body []byte) string {
	t.Helper()
	dir := filepath.Join(firmwareDir, "objects", id)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return b
}

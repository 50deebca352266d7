package console_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// openCatalog is a real firmware catalog on a SQLite file, downloading
// from a simulated artifact server; all of it is closed when the test
// ends, the catalog before its store.
func openCatalog(t *testing.T) (*catalog.Service, *artifactsim.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	dl := download.New(download.Options{SourceRoot: dir, Logger: zerolog.Nop()})
	t.Cleanup(dl.Close)
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: dir, Logger: zerolog.Nop()})
	if err != nil {
		_ = st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Close()
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return svc, srv
}

// TestFirmwarePageFollowsTheCatalog: the firmware page names its event
// stream; the stream tells of a release added, then available, as the
// catalog records them; the page's live part then lists it available.
func TestFirmwarePageFollowsTheCatalog(t *testing.T) {
	cat, srv := openCatalog(t)
	f := newFixtureWith(t, nil, cat)
	code, page := f.get(t, "/console/firmware")
	if code != http.StatusOK || !strings.Contains(page, `data-events="/console/events?topic=firmware"`) {
		t.Fatalf("the firmware page does not follow the catalog: %d\n%s", code, page)
	}
	ev := openEvents(t, f, "topic=firmware")
	if name, _ := ev.next(t); name != "changed" {
		t.Fatalf("first event %q, want the catch-up changed", name)
	}
	rel, err := simrelease.Publish(srv, simrelease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cat.Add(ctx, catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"}); err != nil {
		t.Fatal(err)
	}
	if name, data := ev.next(t); name != "changed" || !strings.Contains(data, `"object":"`+rel.ID+`"`) || !strings.Contains(data, `"change":"added"`) {
		t.Fatalf("add: %s %s", name, data)
	}
	artifacts := 0
	for {
		name, data := ev.next(t)
		if name != "changed" || !strings.Contains(data, rel.ID) {
			t.Fatalf("download: %s %s", name, data)
		}
		if strings.Contains(data, `"change":"artifact"`) && strings.Contains(data, `"state":"ready"`) {
			artifacts++
		}
		if strings.Contains(data, `"change":"availability"`) {
			break
		}
	}
	if artifacts != len(rel.Artifacts()) {
		t.Errorf("%d artifacts told ready, want %d", artifacts, len(rel.Artifacts()))
	}
	_, frag := f.get(t, "/console/firmware?fragment=1")
	if !strings.Contains(frag, `id="object-`+rel.ID+`"`) || !strings.Contains(frag, ">available<") {
		t.Fatalf("the page does not list the release available:\n%s", frag)
	}
	// Other pages do not follow the catalog: a site stream hears nothing
	// of a delete (its next event is the power change that follows).
	site := openEvents(t, f, "topic=site")
	site.next(t)
	if err := cat.Delete(ctx, rel.ID); err != nil {
		t.Fatal(err)
	}
	if name, data := ev.next(t); !strings.Contains(data, `"change":"deleted"`) {
		t.Fatalf("delete: %s %s", name, data)
	}
	f.power.Seen(evilRack, evilNode, "On")
	if _, data := site.next(t); strings.Contains(data, "object") {
		t.Fatalf("the site stream carries a catalog change: %s", data)
	}
}

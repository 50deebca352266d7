package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// member is one cluster member's catalog, with a store and a downloader of
// its own (as a process of its own has), on the fixture's firmware_dir
// and database.
type member struct {
	t     *testing.T
	id    string
	store *sqlstore.Store
	dl    *download.Downloader
	svc   *catalog.Service
}

// openMember opens member id's catalog on fx's firmware directory and
// database; it is closed when the test ends unless closed before.
func (fx *fixture) openMember(id string) *member {
	fx.t.Helper()
	st, err := sqlstore.OpenSQLite(testCtx(fx.t), fx.dbPath, sqlstore.Options{})
	if err != nil {
		fx.t.Fatal(err)
	}
	return fx.openClaimant(id, st, nil)
}

// close stops the member as rmsd shuts down: catalog, downloader, store.
func (m *member) close() {
	if m.svc == nil {
		return
	}
	m.svc.Close()
	m.dl.Close()
	if err := m.store.Close(); err != nil {
		m.t.Errorf("close the store of %s: %v", m.id, err)
	}
	m.svc = nil
}

func (m *member) add(rel simrelease.Release) {
	m.t.Helper()
	if _, err := m.svc.Add(testCtx(m.t), catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"}); err != nil {
		m.t.Fatalf("%s: add %s: %v", m.id, rel.ID, err)
	}
}

// stage prepares the temporary cache of an inline apply of rel's HMC
// package, as ApplyFirmwareObject does.
func (m *member) stage(rel simrelease.Release) *catalog.Staging {
	m.t.Helper()
	man, err := m.svc.Parse(rel.ConfigJSON)
	if err != nil {
		m.t.Fatal(err)
	}
	st, err := m.svc.Prepare(man, []string{rel.HMC.Name}, hw.Secret{})
	if err != nil {
		m.t.Fatalf("%s: Prepare: %v", m.id, err)
	}
	return st
}

// waitFile polls dir until it holds a file whose name starts with prefix,
// and returns its path.
func waitFile(t *testing.T, dir, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				return filepath.Join(dir, e.Name())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no file %s* in %s within %s", prefix, dir, waitTimeout)
		}
		<-tick.C
	}
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// Members share one firmware_dir and one store. A member that starts (a
// rolling upgrade) reaps its own leftovers and re-verifies its own
// interrupted downloads only: another member's download under way, its
// temporary download file and its inline apply's cache are left alone,
// and so is the interrupted download of a member that is down.
func TestMembersSharingAFirmwareDirLeaveEachOthersWorkAlone(t *testing.T) {
	fx := newFixture(t, fixtureOptions{perHost: 4})
	fx.close() // the members below replace the fixture's single rmsd
	gone := fx.publish(simrelease.Options{Milestone: "gone"})
	ownB := fx.publish(simrelease.Options{Milestone: "own-b"})
	held := fx.publish(simrelease.Options{Milestone: "held"})
	stalled := fx.publish(simrelease.Options{Milestone: "stalled"})
	for _, rel := range []simrelease.Release{gone, ownB, held} {
		fx.srv.SetFault(rel.HMC.Path, artifactsim.Fault{Hold: true})
	}
	fx.srv.SetFault(stalled.HMC.Path, artifactsim.Fault{Stall: true, StallAfter: 1024})

	// A member whose download is cut short and that never comes back.
	down := fx.openMember("m-gone")
	down.add(gone)
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	down.close()
	fx.waitReleased()

	// Member m-b stops with a download under way and an inline apply's
	// cache, and a temporary download file of its own left behind.
	b := fx.openMember("m-b")
	b.add(ownB)
	staleStaging := b.stage(ownB).Dir()
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	b.close()
	fx.waitReleased()
	staleTemp := writeCached(t, fx.dir, ownB.ID, "."+ownB.HMC.Name+".part-"+download.MemberTag("m-b")+"-0123456789abcdef", []byte("half"))
	if want := filepath.Join(fx.dir, "ephemeral", "m-b"); filepath.Dir(staleStaging) != want {
		t.Errorf("m-b's temporary cache is %s, want it in %s", staleStaging, want)
	}

	// Member m-a is busy: one download held before its first byte, one
	// stalled halfway with its temporary file written, an inline apply's
	// cache prepared.
	a := fx.openMember("m-a")
	a.add(held)
	a.add(stalled)
	staging := a.stage(held).Dir()
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	partial := waitFile(t, filepath.Join(fx.dir, "objects", stalled.ID), "."+stalled.HMC.Name+".part-"+download.MemberTag("m-a")+"-")
	before := map[string]store.FirmwareObject{}
	for _, id := range []string{gone.ID, held.ID, stalled.ID} {
		before[id] = fx.waitObjectIn(a.store, id)
		if o := before[id]; o.Available || o.UnavailableReason != "" {
			t.Fatalf("%s is not downloading before m-b starts again: %+v", id, o)
		}
	}

	b = fx.openMember("m-b") // m-b starts again while m-a works
	got := fx.waitObjectIn(b.store, ownB.ID, failed)
	if !strings.Contains(got.UnavailableReason, "interrupted by a restart of rmsd before ") ||
		!strings.Contains(got.UnavailableReason, ownB.HMC.Name) || got.Downloader != "m-b" {
		t.Errorf("m-b's own interrupted object: downloader %q, reason %q", got.Downloader, got.UnavailableReason)
	}
	b.close() // its background work has ended

	if exists(t, staleTemp) || exists(t, staleStaging) {
		t.Errorf("m-b's own leftovers not reaped: temporary file %v, temporary cache %v", exists(t, staleTemp), exists(t, staleStaging))
	}
	if !exists(t, partial) {
		t.Errorf("m-b removed the temporary file of m-a's download under way, %s", partial)
	}
	if !exists(t, staging) {
		t.Errorf("m-b removed the temporary cache of m-a's inline apply, %s", staging)
	}
	for id, was := range before {
		// m-a's downloads go on, changing their objects: none may have an
		// artifact or a reason a re-verification records.
		now := fx.waitObjectIn(a.store, id)
		reverified := now.Available || now.UnavailableReason != "" || (id == gone.ID && !now.Updated.Equal(was.Updated))
		for _, art := range now.Artifacts {
			reverified = reverified || art.State == store.ArtifactFailed
		}
		if reverified {
			t.Errorf("m-b re-verified %s (downloaded by %s):\n%+v\nwas\n%+v", id, was.Downloader, now, was)
		}
	}
	fx.waitLog("left to them", gone.ID+" (m-gone)", held.ID+" (m-a)", `"member":"m-b"`)

	// m-a's held download goes on to the end.
	fx.srv.Release(1)
	if o := fx.waitObjectIn(a.store, held.ID, available); o.Downloader != "m-a" {
		t.Errorf("%s: downloader %q, want m-a", held.ID, o.Downloader)
	}
}

// A single rmsd keeps its temporary caches directly in ephemeral/, and
// removes at start only those, not what members keep there.
func TestSingleRmsdReapsOnlyItsOwnTemporaryCaches(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{})
	st := fx.prepare(rel, rel.HMC.Name)
	if want := filepath.Join(fx.dir, "ephemeral"); filepath.Dir(st.Dir()) != want {
		t.Errorf("temporary cache %s, want it in %s", st.Dir(), want)
	}
	memberCache := filepath.Join(fx.dir, "ephemeral", "m-a", rel.ID+"-"+uuid.NewString())
	if err := os.MkdirAll(memberCache, 0o750); err != nil {
		t.Fatal(err)
	}
	fx.close()
	fx.open()
	if exists(t, st.Dir()) || !exists(t, memberCache) {
		t.Errorf("after a restart: own leftover kept %v (want removed), a member's cache kept %v (want kept)",
			exists(t, st.Dir()), exists(t, memberCache))
	}
}

func TestOpenRefusesAMemberIDThatCannotNameADirectory(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	for _, id := range []string{".", "..", "a/b"} {
		svc, err := catalog.Open(testCtx(t), catalog.Options{Store: fx.store, Downloader: fx.dl, Dir: fx.dir, Member: id})
		if err == nil {
			svc.Close()
			t.Errorf("member id %q accepted", id)
		}
	}
}

// waitObjectIn polls st until every one of conds holds for object id, and
// returns the object.
func (fx *fixture) waitObjectIn(st store.Catalog, id string, conds ...func(store.FirmwareObject) bool) store.FirmwareObject {
	fx.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		obj, err := st.GetFirmwareObject(testCtx(fx.t), id)
		if err != nil {
			fx.t.Fatalf("get %s: %v", id, err)
		}
		ok := true
		for _, c := range conds {
			ok = ok && c(obj)
		}
		if ok {
			return obj
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("object %s: not as awaited within %s: %+v\nlogs:\n%s", id, waitTimeout, obj, fx.logs)
		}
		<-tick.C
	}
}

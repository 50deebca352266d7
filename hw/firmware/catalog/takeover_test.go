package catalog_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// claimAfter is the bound the takeover tests give the catalogs (the
// default, six membership timeouts of ten seconds).
const claimAfter = time.Minute

// engine opens stores, as processes of their own, on one database of
// its kind.
type engine struct {
	name string
	// rows: the engine keeps cluster member rows (PostgreSQL).
	rows bool
	open func(t *testing.T, now func() time.Time) *sqlstore.Store
}

// engines are SQLite on the fixture's file and PostgreSQL on a database
// of the test's own.
func engines(fx *fixture) []func(t *testing.T) engine {
	return []func(t *testing.T) engine{
		func(t *testing.T) engine {
			return engine{name: "sqlite", open: func(t *testing.T, now func() time.Time) *sqlstore.Store {
				st, err := sqlstore.OpenSQLite(testCtx(t), fx.dbPath, sqlstore.Options{Now: now})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}}
		},
		func(t *testing.T) engine {
			url := storetest.TempPostgresDatabase(t)
			return engine{name: "postgres", rows: true, open: func(t *testing.T, now func() time.Time) *sqlstore.Store {
				st, err := sqlstore.OpenPostgres(testCtx(t), url, 4, sqlstore.Options{Now: now})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}}
		},
	}
}

// runOnEngines runs fn once per engine, each on a fixture of its own.
func runOnEngines(t *testing.T, fn func(t *testing.T, fx *fixture, e engine)) {
	for i, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, fixtureOptions{perHost: 4})
			fx.close() // the members below replace the fixture's single rmsd
			fn(t, fx, engines(fx)[i](t))
		})
	}
}

// openClaimant opens member id's catalog on st and fx's firmware
// directory, its takeover passes driven by tick; it is closed (catalog,
// downloader, store) when the test ends unless closed before.
func (fx *fixture) openClaimant(id string, st *sqlstore.Store, tick <-chan time.Time) *member {
	fx.t.Helper()
	dl := download.New(download.Options{Member: id, SourceRoot: fx.dir, MaxPerHost: 4, AllowInsecureToken: true,
		Logger: fx.logger("download").With().Str("member", id).Logger()})
	svc, err := catalog.Open(testCtx(fx.t), catalog.Options{Store: st, Downloader: dl, Dir: fx.dir, Member: id,
		ClaimAfter: claimAfter, ClaimTick: tick, Logger: fx.logger("catalog").With().Str("member", id).Logger()})
	if err != nil {
		dl.Close()
		_ = st.Close()
		fx.t.Fatal(err)
	}
	m := &member{t: fx.t, id: id, store: st, dl: dl, svc: svc}
	fx.t.Cleanup(m.close)
	return m
}

// interruptDownloads has member m-gone add rels, their HMC packages held,
// and stop with both downloads under way; then every package of
// rels[0] is in its cache, verified, and rels[1]'s HMC package is a
// corrupt leftover. The objects are stamped with clock's time.
func (fx *fixture) interruptDownloads(e engine, clock *storetest.SettableClock, rels ...simrelease.Release) {
	fx.t.Helper()
	for _, rel := range rels {
		fx.srv.SetFault(rel.HMC.Path, artifactsim.Fault{Hold: true})
	}
	never := make(chan time.Time)
	gone := fx.openClaimant("m-gone", e.open(fx.t, clock.Now), never)
	for _, rel := range rels {
		gone.add(rel)
	}
	if err := fx.srv.WaitHeld(testCtx(fx.t), len(rels)); err != nil {
		fx.t.Fatal(err)
	}
	gone.close()
	fx.waitReleased()
	for _, rel := range rels {
		fx.srv.SetFault(rel.HMC.Path, artifactsim.Fault{})
	}
	for _, a := range rels[0].Artifacts() {
		writeCached(fx.t, fx.dir, rels[0].ID, a.Name, fetch(fx.t, a.URL))
	}
	writeCached(fx.t, fx.dir, rels[1].ID, rels[1].HMC.Name, []byte("half a package"))
}

// A member (m-gone) is killed, for good, in the middle of two downloads.
// Another member leaves them alone while they may still be under way:
// m-gone's heartbeat is recent, or (PostgreSQL) its row in the store was
// just written, as by a member starting again. Once both are older than
// the bound, the other member's next pass takes both over: the object
// whose cached files verify becomes available, the other unavailable
// with the restart's reason, both now downloaded by the survivor. Nothing
// is fetched again.
func TestAMemberTakesOverTheInterruptedDownloadsOfAMemberThatIsGone(t *testing.T) {
	runOnEngines(t, func(t *testing.T, fx *fixture, e engine) {
		done := fx.publish(simrelease.Options{Milestone: "done"})
		half := fx.publish(simrelease.Options{Milestone: "half"})
		start := time.Now().UTC()
		goneClock := storetest.NewSettableClock(start)
		if e.rows {
			// The heartbeat is old; the row below keeps the objects.
			goneClock.Set(start.Add(-2 * claimAfter))
		}
		fx.interruptDownloads(e, goneClock, done, half)
		if e.rows {
			// m-gone starts again and stops at once (a rolling upgrade):
			// its row is fresh, and says it left.
			rows := e.open(t, nil)
			defer rows.Close()
			row, err := rows.JoinMember(testCtx(t), "m-gone", "sys-gone", "127.0.0.1:7000")
			if err != nil {
				t.Fatal(err)
			}
			row.Left = true
			if err := rows.WriteMemberView(testCtx(t), row); err != nil {
				t.Fatal(err)
			}
		}
		requests := len(fx.srv.Requests())

		aClock := storetest.NewSettableClock(start)
		tick := make(chan time.Time)
		a := fx.openClaimant("m-a", e.open(t, aClock.Now), tick)
		fx.waitLog("left to them", done.ID+" (m-gone)", half.ID+" (m-gone)", `"member":"m-a"`)
		tick <- time.Time{}
		tick <- time.Time{} // the first pass has ended
		for _, id := range []string{done.ID, half.ID} {
			o, err := a.store.GetFirmwareObject(testCtx(t), id)
			if err != nil {
				t.Fatal(err)
			}
			if o.Downloader != "m-gone" || o.Available || o.UnavailableReason != "" {
				t.Fatalf("%s taken over while m-gone may be at work: %+v", id, o)
			}
		}

		// Both are as old as the bound now (the row was written after
		// start, by the server's clock).
		aClock.Set(time.Now().UTC().Add(claimAfter + time.Second))
		tick <- time.Time{}
		got := fx.waitObjectIn(a.store, done.ID, available)
		if got.Downloader != "m-a" {
			t.Errorf("%s: downloader %q, want m-a", done.ID, got.Downloader)
		}
		got = fx.waitObjectIn(a.store, half.ID, failed)
		if got.Downloader != "m-a" || !strings.Contains(got.UnavailableReason, "interrupted by a restart of rmsd before ") ||
			!strings.Contains(got.UnavailableReason, "delete the object and add it again") {
			t.Errorf("%s: downloader %q, reason %q", half.ID, got.Downloader, got.UnavailableReason)
		}
		if a := artifactState(got, half.HMC.Name); a.State != store.ArtifactFailed || !strings.Contains(a.Error, "sha256 mismatch") {
			t.Errorf("%s: its corrupt leftover %s is %+v", half.ID, half.HMC.Name, a)
		}
		for _, id := range []string{done.ID, half.ID} {
			fx.waitLog("took over the interrupted firmware download", id, `"from_member":"m-gone"`, `"member":"m-a"`)
		}
		if n := len(fx.srv.Requests()); n != requests {
			t.Errorf("the takeover fetched %d artifacts; it must only verify what is cached", n-requests)
		}
	})
}

// Two members find the same interrupted downloads of a member that is
// gone as they start: exactly one takes each over and re-verifies it.
func TestMembersRacingForADownloadOfAMemberThatIsGoneOneTakesItOver(t *testing.T) {
	runOnEngines(t, func(t *testing.T, fx *fixture, e engine) {
		done := fx.publish(simrelease.Options{Milestone: "done"})
		half := fx.publish(simrelease.Options{Milestone: "half"})
		start := time.Now().UTC()
		fx.interruptDownloads(e, storetest.NewSettableClock(start), done, half)

		later := storetest.NewSettableClock(start.Add(2 * claimAfter))
		stores := []*sqlstore.Store{e.open(t, later.Now), e.open(t, later.Now)}
		never := make(chan time.Time)
		var wg sync.WaitGroup
		survivors := make([]*member, 2)
		for i, id := range []string{"m-a", "m-b"} {
			wg.Go(func() { survivors[i] = fx.openClaimant(id, stores[i], never) })
		}
		wg.Wait()
		for _, c := range []struct {
			id   string
			cond func(store.FirmwareObject) bool
		}{{done.ID, available}, {half.ID, failed}} {
			got := fx.waitObjectIn(survivors[0].store, c.id, c.cond)
			if got.Downloader != "m-a" && got.Downloader != "m-b" {
				t.Errorf("%s: downloader %q, want m-a or m-b", c.id, got.Downloader)
			}
			lines := fx.waitLog("took over the interrupted firmware download", c.id)
			if len(lines) != 1 || !strings.Contains(lines[0], `"member":"`+got.Downloader+`"`) {
				t.Errorf("%s: want one takeover, by %s; got %q", c.id, got.Downloader, lines)
			}
		}
	})
}

package catalog_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/test/syncbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait of these tests; a wait polls and never
// assumes something happened by a given time.
const waitTimeout = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// fixture is a catalog on a SQLite file, downloading from a simulated
// artifact server into a firmware directory of its own.
type fixture struct {
	t      *testing.T
	dbPath string
	dir    string // firmware_dir
	srv    *artifactsim.Server
	dl     *download.Downloader
	logs   *logBuffer
	store  *sqlstore.Store
	svc    *catalog.Service
}

type fixtureOptions struct {
	server      artifactsim.Options
	concurrency int
	// perHost is the downloader's MaxPerHost (0: its default, 2).
	perHost int
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	srv, err := artifactsim.Start(o.server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	fx := &fixture{t: t, dbPath: filepath.Join(t.TempDir(), "rmsd.db"), dir: t.TempDir(), srv: srv, logs: &logBuffer{}}
	// The simulated artifact server is plain http: allow the token there.
	fx.dl = download.New(download.Options{SourceRoot: fx.dir, Concurrency: o.concurrency, MaxPerHost: o.perHost, AllowInsecureToken: true, Logger: fx.logger("download")})
	t.Cleanup(fx.dl.Close)
	fx.open()
	return fx
}

func (fx *fixture) logger(component string) zerolog.Logger {
	return zerolog.New(fx.logs).Level(zerolog.DebugLevel).With().Str("component", component).Logger()
}

// open opens the store and the catalog; both are closed when the test ends
// unless closed before.
func (fx *fixture) open() {
	fx.t.Helper()
	st, err := sqlstore.OpenSQLite(testCtx(fx.t), fx.dbPath, sqlstore.Options{})
	if err != nil {
		fx.t.Fatal(err)
	}
	svc, err := catalog.Open(testCtx(fx.t), catalog.Options{Store: st, Downloader: fx.dl, Dir: fx.dir, Logger: fx.logger("catalog")})
	if err != nil {
		_ = st.Close()
		fx.t.Fatal(err)
	}
	fx.store, fx.svc = st, svc
	fx.t.Cleanup(fx.close)
}

// close closes the catalog, then the store: the order rmsd shuts down in.
func (fx *fixture) close() {
	if fx.svc == nil {
		return
	}
	fx.svc.Close()
	if err := fx.store.Close(); err != nil {
		fx.t.Errorf("close store: %v", err)
	}
	fx.svc, fx.store = nil, nil
}

func (fx *fixture) publish(o simrelease.Options) simrelease.Release {
	fx.t.Helper()
	rel, err := simrelease.Publish(fx.srv, o)
	if err != nil {
		fx.t.Fatal(err)
	}
	return rel
}

func (fx *fixture) add(req catalog.AddRequest) catalog.Object {
	fx.t.Helper()
	obj, err := fx.svc.Add(testCtx(fx.t), req)
	if err != nil {
		fx.t.Fatalf("add: %v", err)
	}
	return obj
}

func (fx *fixture) get(id string) store.FirmwareObject {
	fx.t.Helper()
	obj, err := fx.store.GetFirmwareObject(testCtx(fx.t), id)
	if err != nil {
		fx.t.Fatalf("get %s: %v", id, err)
	}
	return obj
}

// waitObject polls the store until cond holds for object id, and returns
// the object.
func (fx *fixture) waitObject(id, what string, cond func(store.FirmwareObject) bool) store.FirmwareObject {
	fx.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		obj := fx.get(id)
		if cond(obj) {
			return obj
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("object %s: not %s within %s: %+v\nlogs:\n%s", id, what, waitTimeout, obj, fx.logs)
		}
		<-tick.C
	}
}

// waitLog polls the log until a line holds every one of parts, and returns
// the lines that do. The catalog logs an outcome just after recording it,
// so a test that saw the outcome in the store waits for its line: it may
// not be written yet.
func (fx *fixture) waitLog(parts ...string) []string {
	fx.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if l := fx.logs.lines(parts...); len(l) != 0 {
			return l
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("no log line holding %q within %s; logs:\n%s", parts, waitTimeout, fx.logs)
		}
		<-tick.C
	}
}

// waitLines polls the log until n lines hold every one of parts.
func (fx *fixture) waitLines(n int, parts ...string) {
	fx.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for len(fx.logs.lines(parts...)) < n {
		if time.Now().After(deadline) {
			fx.t.Fatalf("fewer than %d log lines holding %q within %s; logs:\n%s", n, parts, waitTimeout, fx.logs)
		}
		<-tick.C
	}
}

// waitReleased waits until the artifact server answers no request: a
// cancelled transfer's request ends on the server, and is recorded in
// its Requests, only once the server notices its client went away, some
// time after the download itself has stopped.
func (fx *fixture) waitReleased() {
	fx.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for fx.srv.InFlight() != 0 {
		if time.Now().After(deadline) {
			fx.t.Fatalf("%d requests (%d held) still answered %s after their download was cancelled",
				fx.srv.InFlight(), fx.srv.Held(), waitTimeout)
		}
		<-tick.C
	}
}

func available(o store.FirmwareObject) bool { return o.Available }

// failed holds once the download ended in failure (a reason recorded).
func failed(o store.FirmwareObject) bool { return o.UnavailableReason != "" }

func artifactState(o store.FirmwareObject, name string) store.Artifact {
	for _, a := range o.Artifacts {
		if a.Name == name {
			return a
		}
	}
	return store.Artifact{}
}

// logBuffer collects log lines safely across goroutines.
type logBuffer struct{ syncbuf.Buffer }

// lines returns the log lines holding every one of parts.
func (l *logBuffer) lines(parts ...string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

package rmsserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// catalogWait bounds every wait of the catalog tests; waits poll and never
// assume something happened by a given time.
const catalogWait = 30 * time.Second

// catalogServer is rmsd's firmware catalog as the daemon wires it, behind a
// real gRPC server: a store (a SQLite file, or a PostgreSQL database), a
// downloader into a firmware directory, a simulated artifact server, and
// one log every part writes to.
type catalogServer struct {
	t        *testing.T
	location string // the SQLite file or the database URL
	postgres bool
	perHost  int    // the downloader's MaxPerHost (0: its default)
	dir      string // firmware_dir
	art      *artifactsim.Server
	logs     *syncBuffer

	store  store.Store
	svc    *catalog.Service
	client rmspb.RackManagerClient
	stop   func()
}

type catalogOptions struct {
	server   artifactsim.Options
	postgres bool
	// perHost is the downloads run at once from the artifact server
	// (download.Options.MaxPerHost; 0: its default, 2).
	perHost int
}

func startCatalog(t *testing.T, o catalogOptions) *catalogServer {
	t.Helper()
	art, err := artifactsim.Start(o.server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	cs := &catalogServer{t: t, dir: t.TempDir(), art: art, logs: &syncBuffer{}, postgres: o.postgres, perHost: o.perHost}
	if o.postgres {
		cs.location = storetest.TempPostgresDatabase(t)
	} else {
		cs.location = filepath.Join(t.TempDir(), "rmsd.db")
	}
	cs.start()
	return cs
}

func (cs *catalogServer) logger(component string) zerolog.Logger {
	return zerolog.New(cs.logs).Level(zerolog.DebugLevel).With().Str("component", component).Logger()
}

// start opens the store, the catalog and a server on them, as rmsd starts.
func (cs *catalogServer) start() {
	t := cs.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), catalogWait)
	defer cancel()
	var err error
	if cs.postgres {
		cs.store, err = sqlstore.OpenPostgres(ctx, cs.location, 4, sqlstore.Options{})
	} else {
		cs.store, err = sqlstore.OpenSQLite(ctx, cs.location, sqlstore.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	// The simulated artifact server is plain http: allow the token there.
	dl := download.New(download.Options{SourceRoot: cs.dir, MaxPerHost: cs.perHost, AllowInsecureToken: true, Logger: cs.logger("download")})
	cs.svc, err = catalog.Open(ctx, catalog.Options{Store: cs.store, Downloader: dl, Dir: cs.dir, Logger: cs.logger("catalog")})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{Deps: Deps{Version: "catalog-test", Catalog: cs.svc}, Logger: cs.logger("grpc")})
	conn := dial(t, ts.addr, nil)
	cs.client = rmspb.NewRackManagerClient(conn)
	svc, st := cs.svc, cs.store
	// rmsd's shutdown order: the server, the catalog, the downloader, the store.
	cs.stop = sync.OnceFunc(func() {
		ts.stop()
		_ = conn.Close()
		svc.Close()
		dl.Close()
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	t.Cleanup(cs.stop)
}

// restart stops everything and starts it again on the same store and
// firmware directory, as a restart of rmsd does.
func (cs *catalogServer) restart() {
	cs.t.Helper()
	cs.stop()
	cs.start()
}

func (cs *catalogServer) publish(o simrelease.Options) simrelease.Release {
	cs.t.Helper()
	rel, err := simrelease.Publish(cs.art, o)
	if err != nil {
		cs.t.Fatal(err)
	}
	return rel
}

func (cs *catalogServer) add(req *rmspb.AddFirmwareObjectRequest) *rmspb.FirmwareObject {
	cs.t.Helper()
	resp, err := cs.client.AddFirmwareObject(rpcContext(cs.t), req)
	if err != nil {
		cs.t.Fatalf("AddFirmwareObject: %v", err)
	}
	return resp.GetObject()
}

func (cs *catalogServer) getObject(id string) *rmspb.FirmwareObject {
	cs.t.Helper()
	resp, err := cs.client.GetFirmwareObject(rpcContext(cs.t), &rmspb.GetFirmwareObjectRequest{Id: id})
	if err != nil {
		cs.t.Fatalf("GetFirmwareObject %s: %v", id, err)
	}
	return resp.GetObject()
}

// waitAvailable polls GetFirmwareObject until the object is available.
func (cs *catalogServer) waitAvailable(id string) *rmspb.FirmwareObject {
	cs.t.Helper()
	var obj *rmspb.FirmwareObject
	cs.poll("object "+id+" available", func() bool {
		obj = cs.getObject(id)
		return obj.GetAvailable()
	})
	return obj
}

// waitFailed polls the store until the object's download has failed (the
// reason is not on the wire), and returns it as stored.
func (cs *catalogServer) waitFailed(id string) store.FirmwareObject {
	cs.t.Helper()
	var obj store.FirmwareObject
	cs.poll("object "+id+" failed", func() bool {
		var err error
		if obj, err = cs.store.GetFirmwareObject(rpcContext(cs.t), id); err != nil {
			cs.t.Fatal(err)
		}
		return obj.UnavailableReason != ""
	})
	return obj
}

// waitReady polls the store until n of the object's artifacts are cached.
func (cs *catalogServer) waitReady(id string, n int) {
	cs.t.Helper()
	cs.poll(fmt.Sprintf("%d artifacts of %s cached", n, id), func() bool {
		obj, err := cs.store.GetFirmwareObject(rpcContext(cs.t), id)
		if err != nil {
			cs.t.Fatal(err)
		}
		ready := 0
		for _, a := range obj.Artifacts {
			if a.State == store.ArtifactReady {
				ready++
			}
		}
		return ready == n
	})
}

// waitReleased waits until the artifact server holds no request: a
// cancelled transfer's request ends there once it notices its client went.
func (cs *catalogServer) waitReleased() {
	cs.t.Helper()
	cs.poll("no request held", func() bool { return cs.art.Held() == 0 })
}

// poll checks cond every few milliseconds until it holds, failing the test
// after catalogWait.
func (cs *catalogServer) poll(what string, cond func() bool) {
	cs.t.Helper()
	deadline := time.Now().Add(catalogWait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			cs.t.Fatalf("not %s within %s; logs but RPC lines:\n%s", what, catalogWait, cs.logs.without(`"component":"grpc"`))
		}
		<-tick.C
	}
}

// waitLog polls the log until a line holds every one of parts, and returns
// how many do. The catalog logs an outcome just after recording it, so a
// test that saw the outcome through an RPC or the store waits for its line:
// it may not be written yet.
func (cs *catalogServer) waitLog(parts ...string) int {
	cs.t.Helper()
	n := 0
	cs.poll(fmt.Sprintf("a log line holding %q", parts), func() bool {
		n = cs.logs.count(parts...)
		return n != 0
	})
	return n
}

// cacheDir is an object's cache directory.
func (cs *catalogServer) cacheDir(id string) string { return filepath.Join(cs.dir, "objects", id) }

// sqliteFiles returns the bytes of the SQLite database and its WAL.
func (cs *catalogServer) sqliteFiles() []byte {
	cs.t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(cs.location + suffix)
		if err != nil && !os.IsNotExist(err) {
			cs.t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// without returns the log without the lines holding part.
func (s *syncBuffer) without(part string) string {
	var keep []string
	for _, line := range strings.Split(s.String(), "\n") {
		if !strings.Contains(line, part) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// count returns how many log lines hold every one of parts.
func (s *syncBuffer) count(parts ...string) int {
	n := 0
	for _, line := range strings.Split(s.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestBareServerAnswersLikeTheDaemon starts the harness's two servers as
// `task bench:load` does (a real rmsd --simulate, prepared, and the bare
// server on its recorded replies) and sends every measured request to
// both: the bare server's replies have the daemon's types and sizes, and
// are the daemon's very replies where those do not change between calls.
// Then short ghz runs go through the harness's measurement on both
// servers: a read on the bare server, and admissions on rmsd, each
// admitted and ended before the run returns.
func TestBareServerAnswersLikeTheDaemon(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// ghz v0.120.0's ConstWorkerTicker sends its one value from a goroutine
	// of its own and its run closes that channel once the duration is up: a
	// run shorter than that goroutine's scheduling delay panics ("send on
	// closed channel", seen with 300 ms on a loaded 2-core machine). Two
	// seconds leave the goroutine ample time.
	o := options{root: "../..", network: 85, settle: 3 * time.Minute, concurrency: 2, admissions: 3, warmup: 2 * time.Second}
	b, ws, err := setup(ctx, o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.close(); err != nil {
			t.Errorf("stopping the servers: %v", err)
		}
	}()

	for _, w := range ws {
		// A prefix as long as the recording's, so that an echoed rack id
		// has the same size.
		req := w.request(strings.Repeat("c", len("load-recording")), 0)
		daemon, err := invoke(ctx, b.d.conn, w, req)
		if err != nil {
			t.Fatalf("rmsd: %v", err)
		}
		bare, err := invoke(ctx, b.bare.conn, w, req)
		if err != nil {
			t.Fatalf("bare: %v", err)
		}
		dn, bn := daemon.ProtoReflect().Descriptor().FullName(), bare.ProtoReflect().Descriptor().FullName()
		if dn != bn || proto.Size(daemon) != proto.Size(bare) {
			t.Errorf("%s: rmsd answers a %s of %d bytes, the bare server a %s of %d bytes", w.name, dn, proto.Size(daemon), bn, proto.Size(bare))
		}
		if !w.admission && !proto.Equal(daemon, bare) {
			t.Errorf("%s: rmsd answers %v, the bare server %v", w.name, daemon, bare)
		}
		if w.admission {
			d, a := daemon.(*rmspb.ApplyStoredFirmwareObjectResponse), bare.(*rmspb.ApplyStoredFirmwareObjectResponse)
			if d.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(d.GetJobs()) != len(b.fix.nodes.GetNodes()) {
				t.Errorf("rmsd did not admit the apply to every node: %v", d.GetResponse())
			}
			if len(a.GetJobs()) != len(d.GetJobs()) || a.GetResponse().GetStatus() != d.GetResponse().GetStatus() {
				t.Errorf("the bare server answers %d jobs (%v), rmsd %d (%v)", len(a.GetJobs()), a.GetResponse().GetStatus(), len(d.GetJobs()), d.GetResponse().GetStatus())
			}
		}
	}
	if err := b.settle(ctx); err != nil {
		t.Fatal(err)
	}

	read, admission := ws[1], ws[3]
	if read.name != "GetVersion" || !admission.admission {
		t.Fatalf("workloads in an unexpected order: %s, %s", read.name, admission.name)
	}
	m, err := b.measure(ctx, read, b.bare, &b.d.server, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.count == 0 || m.errors != 0 || len(m.latencies) != int(m.count) || m.rps() <= 0 {
		t.Errorf("GetVersion on the bare server: %d calls, %d errors, %d latencies, %.0f calls/s", m.count, m.errors, len(m.latencies), m.rps())
	}
	m, err = b.measure(ctx, admission, &b.d.server, b.bare, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.count != uint64(o.admissions) || m.errors != 0 || m.admitted != int(o.admissions) {
		t.Errorf("admissions on rmsd: %d calls, %d errors, %d admitted; want %d, 0, %d", m.count, m.errors, m.admitted, o.admissions, o.admissions)
	}
	if m.cpu <= 0 {
		t.Errorf("rmsd used no CPU time for %d admissions and their jobs", m.count)
	}
	l, err := b.d.admin.ListActors(ctx, &adminpb.ListActorsRequest{})
	if err != nil || l.GetHeldNodes() != 0 {
		t.Errorf("after the admission run rmsd holds %d nodes (%v), want none", l.GetHeldNodes(), err)
	}
}

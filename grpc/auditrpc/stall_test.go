package auditrpc_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/audit"
	"github.com/rmsd/rmsd/grpc/auditrpc"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// TestAStalledStoreDoesNotDelayAuditedRPCs stalls the PostgreSQL store
// behind a proxy that stops forwarding (the store's write deadline far
// longer than the test): audited RPCs still answer, their records are in
// the stream at once and reach the store once it answers again.
func TestAStalledStoreDoesNotDelayAuditedRPCs(t *testing.T) {
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	st, err := sqlstore.OpenPostgres(t.Context(), via, 4, sqlstore.Options{WriteTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stream syncbuf.Buffer
	rec := audit.New(audit.Options{Stream: zerolog.New(&stream), Log: zerolog.Nop(), Store: st})
	srv := rmsserver.New(rmsserver.Options{Deps: rmsserver.Deps{Racks: racks.New(nil)}, Logger: zerolog.Nop(),
		Interceptors: []grpc.UnaryServerInterceptor{auditrpc.Unary(rec, auditrpc.Mutating)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := rmspb.NewRackManagerClient(conn)

	proxy.Stall()
	const calls = 5
	for i := range calls {
		// Answered without the store: a deadline far shorter than the
		// store's, so waiting for it would fail the call.
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		// This server has no node registry: each call answers UNAVAILABLE
		// at once, which the audit log records like any outcome.
		_, err := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-1", NodeId: "node-" + string(rune('a'+i))})
		cancel()
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("DeleteNode %d while the store is stalled: %v, want the handler's own UNAVAILABLE", i, err)
		}
	}
	if n := strings.Count(stream.String(), `"rpc":"/rack_manager.RackManager/DeleteNode"`); n != calls {
		t.Errorf("%d records in the stream while the store is stalled, want %d", n, calls)
	}
	proxy.Restore()

	_ = conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv.Shutdown(ctx)
	<-served
	rec.Close(ctx)
	got, err := st.ListAudit(t.Context(), store.AuditFilter{RackID: "rack-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Outcome != "UNAVAILABLE" || r.Reason != "node registry is not available on this server" {
			t.Errorf("recorded %+v", r)
		}
	}
	if len(got) != calls || rec.Dropped() != 0 {
		t.Errorf("the store holds %d records, %d dropped; want all %d stored once it answered", len(got), rec.Dropped(), calls)
	}
}

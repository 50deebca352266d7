package auditrpc_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/rmsd/rmsd/audit"
	"github.com/rmsd/rmsd/grpc/auditrpc"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// BenchmarkAuditedCall measures what the audit interceptor adds to one
// call of a rack-wide batch (18 nodes): "unaudited" is the same chain for
// a method outside the audited set (the baseline), "stream" records to the
// stream only, "store" also queues for a SQLite store (the RPC's share:
// the store is written by the recorder's goroutine).
func BenchmarkAuditedCall(b *testing.B) {
	var nodes []*rmspb.NodeInfo
	for i := range 18 {
		nodes = append(nodes, &rmspb.NodeInfo{RackId: "rack-1", NodeId: fmt.Sprintf("compute-%02d", i)})
	}
	req := &rmspb.BatchSetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: nodes}}
	reply := &rmspb.BatchSetPowerStateResponse{Response: &rmspb.NodeBatchResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, JobId: "parent"}}
	handler := func(context.Context, any) (any, error) { return reply, nil }
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 53122}})
	info := &grpc.UnaryServerInfo{FullMethod: rmspb.RackManager_BatchSetPowerState_FullMethodName}

	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, bc := range []struct {
		name    string
		opts    audit.Options
		audited func(string) bool
	}{
		{"unaudited", audit.Options{Stream: zerolog.New(io.Discard)}, func(string) bool { return false }},
		{"stream", audit.Options{Stream: zerolog.New(io.Discard)}, auditrpc.Mutating},
		{"store", audit.Options{Stream: zerolog.New(io.Discard), Log: zerolog.Nop(), Store: st, QueueSize: 1 << 16}, auditrpc.Mutating},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rec := audit.New(bc.opts)
			intercept := auditrpc.Unary(rec, bc.audited)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := intercept(ctx, req, info, handler); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			rec.Close(cctx)
			cancel()
		})
	}
}

package forward

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/messages"
)

// BenchmarkGetJobStatus polls one job's status on its owner's own server
// (direct) and through another member (forwarded: the job's rack looked up
// once and cached, the call encoded into a Forward and its reply decoded,
// over the in-process fake cluster, so the figure is the forwarding's own
// cost without the network between members). Report the ratio of the two.
func BenchmarkGetJobStatus(b *testing.B) {
	s := startSite(b, 1)
	rack := s.racks[0]
	job, err := s.engines[rack].Create(context.Background(), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: rack, NodeID: "node-1"},
		messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) { _ = job.Complete("Completed", "") }), nil)
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	owner := rmsserver.New(rmsserver.Options{Logger: zerolog.Nop(), Deps: rmsserver.Deps{Jobs: s.engines[rack]}})
	go func() { _ = owner.Serve(lis) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		owner.Shutdown(ctx)
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	direct, forwarded := rmspb.NewRackManagerClient(conn), s.member(b, "member-b")
	req := &rmspb.GetJobStatusRequest{JobId: job.ID}
	call := func(c rmspb.RackManagerClient) time.Duration {
		start := time.Now()
		if _, err := c.GetJobStatus(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	call(forwarded) // the job's rack is cached from here on
	// The two alternate, so that both see the same load on the machine.
	var d, f time.Duration
	for b.Loop() {
		d += call(direct)
		f += call(forwarded)
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "direct-ns/op")
	b.ReportMetric(float64(f.Nanoseconds())/float64(b.N), "forwarded-ns/op")
	b.ReportMetric(float64(f)/float64(d), "forwarded/direct")
}

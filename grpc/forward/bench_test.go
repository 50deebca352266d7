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
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
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
	served := make(chan error, 1)
	go func() { served <- owner.Serve(lis) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		owner.Shutdown(ctx)
		if err := <-served; err != nil {
			b.Errorf("Serve: %v", err)
		}
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

// BenchmarkClusterParentStatus polls a finished cluster parent over two
// racks through two members in turn: one reads the parent's record from
// the store on every poll, with the job → rack lookup that precedes it
// (uncached, as every member did before the parent cache), the other
// reads it once and keeps it (cached). Both then ask each rack's owner
// for its batch over the in-process fake cluster and render the parent.
// Report the ratio cached/uncached.
func BenchmarkClusterParentStatus(b *testing.B) {
	s := startSite(b, 2)
	nodes := append(append([]hw.Node(nil), s.nodes[s.racks[0]]...), s.nodes[s.racks[1]]...)
	cached := s.member(b, "member-a")
	r := newReceiver(s.cluster, siteStore{s.store, s}, "member-b", s.memberLog("member-b"))
	r.parents = newIDCache[store.ClusterParent](0)
	uncached := s.memberOf(b, r)
	ctx := context.Background()
	resp, err := cached.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(nodes...), Username: "admin", Password: "Next-Pass-1"})
	if err != nil || resp.GetResponse().GetJobId() == "" {
		b.Fatalf("batch: %v %v", resp, err)
	}
	req := &rmspb.GetJobStatusRequest{JobId: resp.GetResponse().GetJobId(), IncludeChildJobStates: true}
	poll := func(c rmspb.RackManagerClient) (time.Duration, bool) {
		start := time.Now()
		got, err := c.GetJobStatus(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		s := got.GetJobStates()[0].GetExecutionState()
		return time.Since(start), s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if _, done := poll(cached); done {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the batch did not end")
		}
		time.Sleep(20 * time.Millisecond) // polling a job, as a client does
	}
	// The two alternate, so that both see the same load on the machine.
	var c, u time.Duration
	for b.Loop() {
		d, _ := poll(uncached)
		u += d
		d, _ = poll(cached)
		c += d
	}
	b.ReportMetric(float64(u.Nanoseconds())/float64(b.N), "uncached-ns/op")
	b.ReportMetric(float64(c.Nanoseconds())/float64(b.N), "cached-ns/op")
	b.ReportMetric(float64(c)/float64(u), "cached/uncached")
}

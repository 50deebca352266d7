package forward

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
)

// The children of a batch forwarded to a rack's owner start once Serve has
// produced the reply, not when the call's deadline (minutes away) or the
// context Serve was given ends: the owner's handler context is over when
// its answer is. Serve is called as the rack's grain calls it, under a
// context of the owner's own that outlives the answer.
func TestForwardedBatchChildrenStartOnceTheReplyIsProduced(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration // of the caller; 0 for a call without one
	}{{"caller deadline of ten minutes", 10 * time.Minute}, {"no caller deadline", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSite(t, 1)
			rack := s.racks[0]
			body, err := proto.Marshal(&rmspb.UpdateSwitchSystemPasswordRequest{
				Nodes: nodeSet(s.nodes[rack]...), Username: "admin", Password: "Next-Pass-1"})
			if err != nil {
				t.Fatal(err)
			}
			fwd := &rackpb.Forward{Method: rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName, Request: body,
				RackId: rack, FromMember: "member-b"}
			// The owner's context ends at the deadline, or at the test's
			// end for a call without one: never before the children must
			// have run.
			owner, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.deadline > 0 {
				d := time.Now().Add(tc.deadline)
				fwd.DeadlineUnixNano = d.UnixNano()
				var cancelAt context.CancelFunc
				owner, cancelAt = context.WithDeadline(owner, d)
				defer cancelAt()
			}
			rep := Serve(owner, s.handlers[rack], fwd, zerolog.New(s.logs))
			if rep.GetCode() != 0 {
				t.Fatalf("Serve: %s (%d)", rep.GetMessage(), rep.GetCode())
			}
			reply := &rmspb.UpdateSwitchSystemPasswordResponse{}
			if err := proto.Unmarshal(rep.GetReply(), reply); err != nil {
				t.Fatal(err)
			}
			id := reply.GetResponse().GetJobId()
			if id == "" {
				t.Fatalf("no job admitted: %v", reply)
			}
			// A minute is far more than the children need on a loaded
			// machine, and far less than the caller's deadline.
			wait, done := context.WithTimeout(context.Background(), time.Minute)
			defer done()
			e := s.engines[rack]
			if err := e.Wait(wait, id); err != nil {
				jobs, _ := e.Get(context.Background(), id, true)
				t.Fatalf("the batch did not end within a minute of its answer (%v): %+v", err, jobs)
			}
			jobs, err := e.Get(wait, id, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 3 || jobs[0].State != messages.StateCompleted {
				t.Fatalf("batch %+v (%d jobs), want Completed with two children", jobs[0], len(jobs))
			}
			for _, c := range jobs[1:] {
				if c.State != messages.StateCompleted {
					t.Errorf("child %s: %v %s", c.NodeID, c.State, c.ErrorMessage)
				}
			}
		})
	}
}

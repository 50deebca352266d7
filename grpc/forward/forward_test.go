package forward

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
)

const (
	completed = rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED
	failed    = rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
)

// waitJob polls GetJobStatus (with children) through c until the job is
// terminal, within a deadline.
func waitJob(t *testing.T, c rmspb.RackManagerClient, id string) []*rmspb.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		r, err := c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
		if err != nil {
			t.Fatalf("GetJobStatus %s: %v", id, err)
		}
		s := r.GetJobStates()[0].GetExecutionState()
		if s == completed || s == failed {
			return r.GetJobStates()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s did not end: %v", id, r.GetJobStates()[0])
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestASingleRackJobThroughAnotherMemberAnswersItsIDAndStatus(t *testing.T) {
	s := startSite(t, 2)
	c := s.member(t, "member-b")
	rack := s.racks[0]
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(rpcContext(t), "x-request-id", "req-42", "authorization", "Bearer secret"), 20*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var trailer metadata.MD
	resp, err := c.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(append(s.nodes[rack], s.compute[rack])...), Username: "admin", Password: "Next-Pass-1"}, grpc.Trailer(&trailer))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetJobId() == "" || r.GetStats().GetTotalNodes() != 3 || r.GetStats().GetFailedNodes() != 1 ||
		!strings.Contains(r.GetNodeResults()[2].GetErrorMessage(), "not an NVLink switch") {
		t.Fatalf("reply %v", r)
	}
	// The owner's in-band reason reaches the caller as a single rmsd's.
	if got := trailer.Get(rmsserver.ReasonTrailer); len(got) != 1 || !strings.Contains(got[0], "not an NVLink switch") {
		t.Errorf("reason trailer %v", got)
	}
	fwds := s.cluster.forwards()
	if len(fwds) != 1 {
		t.Fatalf("%d forwards, want 1", len(fwds))
	}
	f := fwds[0]
	if f.GetRackId() != rack || f.GetFromMember() != "member-b" || f.GetMethod() != rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName ||
		f.GetMetadata()["x-request-id"] != "req-42" || f.GetMetadata()["authorization"] != "" || !strings.HasPrefix(f.GetCaller(), "peer 127.0.0.1:") {
		t.Errorf("forward %v", f)
	}
	// The server works its deadline out from the timeout the client sent.
	if d := time.Unix(0, f.GetDeadlineUnixNano()); d.Sub(deadline).Abs() > 2*time.Second {
		t.Errorf("forwarded deadline %v, caller's %v", d, deadline)
	}
	states := waitJob(t, c, r.GetJobId())
	if states[0].GetExecutionState() != completed || len(states) != 3 || states[0].GetRackId() != rack {
		t.Fatalf("job %v (%d states)", states[0], len(states))
	}
	// The owner ran it: the switches take the new password.
	for _, n := range s.nodes[rack] {
		if s.nvos(t, n).Saves() == 0 {
			t.Errorf("%s: no rotation saved", n.ID)
		}
	}
}

func TestAnUnknownJobIDIsAnsweredAsASingleRmsdAnswersIt(t *testing.T) {
	s := startSite(t, 1)
	c := s.member(t, "member-a")
	ctx := rpcContext(t)
	const id = "0b6f3e62-5a0c-4c5e-9d2b-2a1f6b1f0c11"
	_, err := c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: id})
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "job "+id+" not found" {
		t.Errorf("GetJobStatus: %v", err)
	}
	var trailer metadata.MD
	fw, err := c.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: id}, grpc.Trailer(&trailer))
	if err != nil || fw.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || fw.GetErrorMessage() != "job "+id+" not found" || fw.GetJobId() != id {
		t.Errorf("GetFirmwareJobStatus: %v %v", fw, err)
	}
	if got := trailer.Get(rmsserver.ReasonTrailer); len(got) != 1 || got[0] != "job "+id+" not found" {
		t.Errorf("reason trailer %v", got)
	}
	sw, err := c.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: id})
	if err != nil || sw.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || sw.GetMessage() != "job "+id+" not found" {
		t.Errorf("GetSwitchSystemImageJobStatus: %v %v", sw, err)
	}
	if len(s.cluster.forwards()) != 0 {
		t.Error("an unknown job was forwarded")
	}
}

// A batch over three racks gets a cluster parent: one batch per rack on
// its owner, a parent whose status aggregates them as a single rmsd's
// batch parent does, the same from two members, and a failure in one rack
// shown as that child's failure.
func TestABatchOverThreeRacksHasAClusterParentAnyMemberAnswers(t *testing.T) {
	s := startSite(t, 3)
	a, b := s.member(t, "member-a"), s.member(t, "member-b")
	var all []hw.Node
	for _, rack := range s.racks {
		all = append(all, s.nodes[rack]...)
	}
	bad := s.nodes[s.racks[2]][1]
	s.nvos(t, bad).RejectLogins(true)
	resp, err := a.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(all...), Username: "admin", Password: "Next-Pass-1"})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetStats().GetTotalNodes() != 6 || len(r.GetNodeResults()) != 6 {
		t.Fatalf("reply %v", r)
	}
	for i, res := range r.GetNodeResults() {
		if res.GetNodeId() != all[i].ID {
			t.Errorf("result %d is %s, want %s (request order)", i, res.GetNodeId(), all[i].ID)
		}
	}
	p, err := s.store.ClusterParent(rpcContext(t), r.GetJobId())
	if err != nil || len(p.Racks) != 3 || p.Member != "member-a" || p.Type != "switch_system_password_update" {
		t.Fatalf("cluster parent %v: %v", p, err)
	}
	states := waitJob(t, a, r.GetJobId())
	parent := states[0]
	if parent.GetExecutionState() != failed || parent.GetStateDescription() != "Batch complete: 5/6 succeeded, 1 failed" ||
		parent.GetErrorMessage() != "1 of 6 switch system password updates failed" || len(parent.GetChildJobIds()) != 6 || len(states) != 7 {
		t.Fatalf("parent %v (%d states)", parent, len(states))
	}
	for _, c := range states[1:] {
		want := completed
		if c.GetNodeId() == bad.ID && c.GetRackId() == bad.RackID {
			want = failed
			if !strings.Contains(parent.GetResultJson(), c.GetJobId()) {
				t.Errorf("the failure document %s does not name the failed child %s", parent.GetResultJson(), c.GetJobId())
			}
		}
		if c.GetExecutionState() != want {
			t.Errorf("child %s/%s: %v", c.GetRackId(), c.GetNodeId(), c.GetExecutionState())
		}
	}
	other, err := b.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: r.GetJobId(), IncludeChildJobStates: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := other.GetJobStates(); len(got) != len(states) || got[0].GetStateDescription() != parent.GetStateDescription() ||
		got[0].GetResultJson() != parent.GetResultJson() || !equalStrings(got[0].GetChildJobIds(), parent.GetChildJobIds()) {
		t.Errorf("member-b reads %v, member-a %v", got[0], parent)
	}
	fw, err := b.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: r.GetJobId()})
	if err != nil || fw.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || fw.GetJobState() != rmspb.FirmwareJobState(failed) {
		t.Errorf("GetFirmwareJobStatus of the cluster parent: %v %v", fw, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAnUnreachableOwnerAnswersUnavailable(t *testing.T) {
	s := startSite(t, 2)
	c := s.member(t, "member-a")
	down, up := s.racks[0], s.racks[1]
	s.cluster.setDown(down, true)
	_, err := c.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(s.nodes[down]...), Username: "admin", Password: "Next-Pass-1"})
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "rack "+down+": owner not reachable; retry" {
		t.Errorf("single rack: %v", err)
	}
	// Across racks, the unreachable rack's nodes fail in band and the
	// parent records why; the other rack's batch runs.
	var trailer metadata.MD
	resp, err := c.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(append(s.nodes[down], s.nodes[up]...)...), Username: "admin", Password: "Next-Pass-1"}, grpc.Trailer(&trailer))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetFailedNodes() != 2 || r.GetStats().GetTotalNodes() != 4 ||
		r.GetNodeResults()[0].GetErrorMessage() != "rack "+down+": owner not reachable; retry" || r.GetJobId() == "" {
		t.Fatalf("reply %v", r)
	}
	if got := trailer.Get(rmsserver.ReasonTrailer); len(got) != 1 || !strings.Contains(got[0], "owner not reachable") {
		t.Errorf("reason trailer %v", got)
	}
	p, err := s.store.ClusterParent(rpcContext(t), r.GetJobId())
	if err != nil || p.Racks[0].Failure != "rack "+down+": owner not reachable; retry" || p.Racks[1].JobID == "" {
		t.Fatalf("cluster parent %v: %v", p, err)
	}
	states := waitJob(t, c, r.GetJobId())
	if states[0].GetExecutionState() != completed || len(states) != 3 {
		t.Errorf("parent %v (%d states)", states[0], len(states))
	}
	// Its status needs every rack with a job: one unreachable is UNAVAILABLE.
	s.cluster.setDown(up, true)
	if _, err := c.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: r.GetJobId()}); status.Code(err) != codes.Unavailable {
		t.Errorf("status with the owner down: %v", err)
	}
}

// A request of a one-rack method naming nodes of two racks gets the
// refusal a single rmsd gives, from the first rack's owner, and nothing
// starts.
func TestAOneRackMethodOverTwoRacksIsRefusedAsByASingleRmsd(t *testing.T) {
	s := startSite(t, 2)
	c := s.member(t, "member-a")
	resp, err := c.ExecuteColdReboot(rpcContext(t), &rmspb.ExecuteColdRebootRequest{
		Nodes: nodeSet(s.compute[s.racks[0]], s.nodes[s.racks[0]][0], s.compute[s.racks[1]])})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() != "" || !strings.Contains(r.GetMessage()+r.GetNodeResults()[2].GetErrorMessage(), "one rack per request") {
		t.Errorf("reply %v", r)
	}
	if fw := s.cluster.forwards(); len(fw) != 1 || fw[0].GetRackId() != s.racks[0] {
		t.Errorf("forwards %v", fw)
	}
}

package rmsserver

import (
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

const (
	completed = rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED
	failed    = rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
)

// The password of these tests: unique, so that finding it anywhere proves
// a leak.
const secretPassword = "Zq7-unique-Rotation-Secret-91x"

func TestUpdateSwitchSystemPassword_RotatesEachSwitchAndShowsThePasswordNowhere(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	compute := a.ofKind(hw.KindCompute)[0]
	a.nvos(t, sw[2]).RejectLogins(true) // wrong credentials on one switch among several
	resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(sw[0], sw[1], sw[2], compute), Username: "admin", Password: secretPassword})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetJobId() == "" || r.GetStats().GetTotalNodes() != 4 || r.GetStats().GetFailedNodes() != 1 || len(r.GetNodeResults()) != 4 ||
		r.GetNodeResults()[3].GetNodeId() != compute.ID || !strings.Contains(r.GetNodeResults()[3].GetErrorMessage(), "not an NVLink switch") ||
		!strings.HasPrefix(r.GetMessage(), "Started 3 of 4 switch system password updates; failed: node_id="+compute.ID) {
		t.Fatalf("response = %v", r)
	}
	states := a.waitJobs(t, r.GetJobId())
	if states[0].GetExecutionState() != failed || len(states) != 4 {
		t.Fatalf("parent = %v (%d states)", states[0], len(states))
	}
	for _, n := range sw[:2] {
		c := childOf(t, states, n.ID)
		if c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"outcome":"rotated"`) ||
			!strings.Contains(c.GetResultJson(), `"phase":"password_update_persisted"`) {
			t.Errorf("%s: %v", n.ID, c)
		}
		if !a.loginWorks(t, n, "admin", secretPassword) || a.loginWorks(t, n, "admin", sim.DefaultPassword) {
			t.Errorf("%s: the new password must be the only one that logs in", n.ID)
		}
		if a.nvos(t, n).Saves() == 0 {
			t.Errorf("%s: the rotation was not saved", n.ID)
		}
	}
	bad := childOf(t, states, sw[2].ID)
	if bad.GetExecutionState() != failed || bad.GetErrorCode() != rmspb.JobError_JOB_ERROR_UNAUTHENTICATED ||
		!strings.Contains(bad.GetErrorMessage(), "admin") {
		t.Errorf("switch refusing every login: %v", bad)
	}
	a.assertNeverShown(t, secretPassword, states...)
	a.assertNeverShown(t, sim.DefaultPassword, states...)
}

func TestUpdateSwitchSystemPassword_ResumesAHalfAppliedRotation(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	// sw[0]: an earlier rotation applied the new password but never saved
	// it; the caller still has the old one. sw[1]: the caller already
	// records the new password. sw[2]: another user is rotated.
	a.nvos(t, sw[0]).SetPassword("admin", hw.NewSecret(secretPassword))
	a.nvos(t, sw[1]).SetPassword("admin", hw.NewSecret(secretPassword))
	saves := a.nvos(t, sw[0]).Saves()
	nodes := nodeSet(sw[0], withLogin(sw[1], "admin", secretPassword))
	resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodes, Username: "admin", Password: secretPassword})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("response = %v, %v", resp.GetResponse(), err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	for _, c := range states[1:] {
		if c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"outcome":"resumed"`) {
			t.Errorf("%s: %v", c.GetNodeId(), c)
		}
	}
	if a.nvos(t, sw[0]).Saves() != saves+1 {
		t.Errorf("the resumed rotation must save the configuration once")
	}
	other, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(sw[2]), Username: "operator1", Password: secretPassword})
	if err != nil {
		t.Fatal(err)
	}
	states = append(states, a.waitJobs(t, other.GetResponse().GetJobId())...)
	if c := states[len(states)-1]; c.GetExecutionState() != completed || !a.loginWorks(t, sw[2], "operator1", secretPassword) ||
		!a.loginWorks(t, sw[2], "admin", sim.DefaultPassword) {
		t.Errorf("rotating another user: %v", c)
	}
	a.assertNeverShown(t, secretPassword, states...)
}

func TestUpdateSwitchSystemPassword_RecoversAnExpiredFactoryLogin(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)[0]
	h := a.nvos(t, sw)
	h.SetPassword("admin", hw.NewSecret("admin")) // as after a factory reset
	h.ExpirePassword("admin")
	resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(sw), Username: "admin", Password: secretPassword})
	if err != nil {
		t.Fatal(err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if c := states[1]; c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"outcome":"recovered_factory_default"`) {
		t.Fatalf("child = %v", c)
	}
	if !a.loginWorks(t, sw, "admin", secretPassword) {
		t.Error("the recovered login must accept the new password")
	}
	a.assertNeverShown(t, secretPassword, states...)
}

func TestSwitchAdminBatches_EmptyAndBusy(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	ctx := rpcContext(t)
	empty := []*rmspb.NodeBatchResponse{}
	f, err2 := a.client.BatchResetSwitchFactoryDefault(ctx, &rmspb.BatchResetSwitchFactoryDefaultRequest{})
	s, err3 := a.client.BatchResetSwitchSdnFactoryDefault(ctx, &rmspb.BatchResetSwitchSdnFactoryDefaultRequest{})
	if err2 != nil || err3 != nil {
		t.Fatal(err2, err3)
	}
	empty = append(empty, f.GetResponse(), s.GetResponse())
	for i, r := range empty {
		if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != "No nodes specified in request" ||
			r.GetStats().GetTotalNodes() != 0 || r.GetJobId() != "" {
			t.Errorf("empty request %d = %v", i, r)
		}
	}

	// A switch a job holds is refused in band, naming the holder; the
	// other switch is reset.
	holder := (&firmwareRack{simRack: a.simRack}).holdNode(t, sw[0])
	resp, err := a.client.BatchResetSwitchFactoryDefault(ctx, &rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(sw[0], sw[1])})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	want := "job already in progress for rack " + sw[0].RackID + " node " + sw[0].ID + " (job_id " + holder + ")"
	if r.GetStats().GetFailedNodes() != 1 || r.GetNodeResults()[0].GetErrorMessage() != want || r.GetJobId() == "" {
		t.Fatalf("response = %v", r)
	}
	states := a.waitJobs(t, r.GetJobId())
	if len(states) != 2 || states[1].GetNodeId() != sw[1].ID || states[1].GetExecutionState() != completed {
		t.Fatalf("jobs = %v", states)
	}
	if a.nvos(t, sw[0]).Boots() != 0 {
		t.Error("the held switch was reset")
	}
}

func TestBatchResetSwitchFactoryDefault_ResetsRetriesAsAdminAndWaitsForTheFactoryLogin(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	// sw[1]: the configured login is stale, the factory login works.
	a.nvos(t, sw[1]).SetPassword("admin", hw.NewSecret("admin"))
	// sw[2]: no login works at all.
	a.nvos(t, sw[2]).RejectLogins(true)
	resp, err := a.client.BatchResetSwitchFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchFactoryDefaultRequest{
		Nodes: nodeSet(sw[0], sw[1], sw[2])})
	if err != nil || resp.GetResponse().GetStats().GetSuccessfulNodes() != 3 {
		t.Fatalf("response = %v, %v", resp.GetResponse(), err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	for i, login := range []string{"configured", "factory_default"} {
		c := childOf(t, states, sw[i].ID)
		if c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"reset_login":"`+login+`"`) {
			t.Errorf("%s: %v", sw[i].ID, c)
		}
		h := a.nvos(t, sw[i])
		if h.Boots() != 1 || !h.Reachable() {
			t.Errorf("%s: %d boots", sw[i].ID, h.Boots())
		}
		// The factory password is kept: admin/admin still has to be
		// changed on the first console login.
		if a.loginWorks(t, sw[i], "admin", "admin") {
			t.Errorf("%s: the forced password change was answered", sw[i].ID)
		}
	}
	if c := childOf(t, states, sw[2].ID); c.GetExecutionState() != failed || c.GetErrorCode() != rmspb.JobError_JOB_ERROR_UNAUTHENTICATED ||
		!strings.Contains(c.GetErrorMessage(), "admin/admin") {
		t.Errorf("switch refusing every login: %v", c)
	}
	a.assertNeverShown(t, sim.DefaultPassword, states...)
}

func TestBatchResetSwitchFactoryDefault_ARebootLongerThanTheTimeoutFails(t *testing.T) {
	timing := fastAdminTiming
	timing.ResetTimeout = 300 * time.Millisecond // the simulated reboot lasts a second
	a := startAdminRack(t, timing)
	sw := a.ofKind(hw.KindSwitch)[0]
	resp, err := a.client.BatchResetSwitchFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(sw)})
	if err != nil {
		t.Fatal(err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if c := states[1]; c.GetExecutionState() != failed || c.GetErrorCode() != rmspb.JobError_JOB_ERROR_TIMEOUT ||
		!strings.Contains(c.GetResultJson(), `"phase":"factory_login"`) {
		t.Fatalf("child = %v", c)
	}
}

func TestBatchResetSwitchSdnFactoryDefault_ResetsThePrimaryAndRefusesTheOthers(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	primary := a.nvos(t, sw[0])
	primary.EnableCluster(true)
	var all []*rmspb.JobStatus
	for round := 1; round <= 2; round++ { // idempotent: a second reset succeeds too
		resp, err := a.client.BatchResetSwitchSdnFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchSdnFactoryDefaultRequest{
			Nodes: nodeSet(sw[0], sw[1])})
		if err != nil {
			t.Fatal(err)
		}
		states := a.waitJobs(t, resp.GetResponse().GetJobId())
		all = append(all, states...)
		if c := childOf(t, states, sw[0].ID); c.GetExecutionState() != completed {
			t.Errorf("round %d primary: %v", round, c)
		}
		if c := childOf(t, states, sw[1].ID); c.GetExecutionState() != failed || c.GetErrorCode() != rmspb.JobError_JOB_ERROR_CLIENT_ERROR ||
			!strings.Contains(c.GetErrorMessage(), "cluster is not enabled") {
			t.Errorf("round %d non-primary: %v", round, c)
		}
		if primary.SDNResets() != round {
			t.Errorf("round %d: %d resets", round, primary.SDNResets())
		}
	}
	a.assertNeverShown(t, sim.DefaultPassword, all...)
}

func TestBatchResetSwitchSdnFactoryDefault_AnActionLongerThanTheTimeoutFails(t *testing.T) {
	timing := fastAdminTiming
	timing.SDNActionTimeout = 200 * time.Millisecond
	a := startAdminRack(t, timing)
	sw := a.ofKind(hw.KindSwitch)[0]
	a.nvos(t, sw).EnableCluster(true)
	a.nvos(t, sw).SlowActions(1e6)
	resp, err := a.client.BatchResetSwitchSdnFactoryDefault(rpcContext(t), &rmspb.BatchResetSwitchSdnFactoryDefaultRequest{Nodes: nodeSet(sw)})
	if err != nil {
		t.Fatal(err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if c := states[1]; c.GetExecutionState() != failed || c.GetErrorCode() != rmspb.JobError_JOB_ERROR_TIMEOUT {
		t.Fatalf("child = %v", c)
	}
}

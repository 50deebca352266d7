package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/member/etcdtest"
	"github.com/rmsd/rmsd/test/clustersite"
)

// siteMembershipTimeout is the site's [cluster] membership_timeout_seconds:
// longer than the ownership test's 3 s, as with jobs running on a loaded
// two-core machine a renewal within 3/4 of 3 s is not assured, and a lost
// lease interrupts the rack's jobs.
const siteMembershipTimeout = 6

// siteDrainTimeout is the site's [workflows] drain_timeout_seconds: a
// draining member's firmware children (two flashes and a BMC reboot each
// on the simulator) end well within it even on a loaded machine, so a
// rolling restart interrupts none.
const siteDrainTimeout = 45

// startClusterSite starts a clustersite (startSite): the simulator in the test
// process (so its overlap count, the pairs of workflows that acted on one
// device at once, can be read), members as processes of their own on
// loopback sharing one PostgreSQL database and finding each other through
// the etcd at etcdEndpoint (the automanaged provider when empty), every
// simulated node registered through the first member. It waits until every member lists
// the nodes from its own registry.
func startClusterSite(t *testing.T, racks, members int, etcdEndpoint string) *clustersite.Site {
	t.Helper()
	s := startSite(t, clustersite.Options{
		Racks: racks, Members: members, Binary: siteBinary(t), EtcdEndpoint: etcdEndpoint,
		MembershipTimeout: siteMembershipTimeout, DrainTimeout: siteDrainTimeout,
	})
	// Every member lists the nodes from its own registry: the racks'
	// owners wrote them and told every member to reload the racks.
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	all := len(s.Nodes.GetNodes())
	written := time.Now()
	for _, m := range s.Members {
		for {
			inv, err := m.RMS().ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{})
			if err == nil && len(inv.GetNodes()) == all {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s lists %d nodes (%v), want the %d created through %s", m.ID, len(inv.GetNodes()), err, all, s.Members[0].ID)
			}
			clustersite.Pause(ctx, 100*time.Millisecond)
		}
	}
	t.Logf("every member listed the %d nodes %s after CreateNodes answered (full reload every %d s)",
		all, time.Since(written).Round(10*time.Millisecond), siteMembershipTimeout)
	return s
}

// The site's members run rmsd built without the race detector: three
// race-instrumented members, the simulator and the test on a loaded
// two-core machine stall a member past protoactor's 2 s health check,
// which blocks it from the cluster for good (docs/cluster.md, Known
// upstream issue). The ownership test runs race-instrumented members.
var (
	siteBinaryOnce sync.Once
	siteBinaryPath string
	siteBinaryErr  error
)

// removeSiteBinary removes the built rmsd, if any (TestMain).
func removeSiteBinary() {
	if siteBinaryPath != "" {
		_ = os.RemoveAll(filepath.Dir(siteBinaryPath))
	}
}

// siteBinary builds cmd/rmsd once per test process.
func siteBinary(t *testing.T) string {
	t.Helper()
	siteBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rmsd-cluster")
		if err != nil {
			siteBinaryErr = err
			return
		}
		siteBinaryPath, siteBinaryErr = clustersite.Build(context.Background(), dir, false)
	})
	if siteBinaryErr != nil {
		t.Fatal(siteBinaryErr)
	}
	return siteBinaryPath
}

// coldReboot asks for a cold reboot of rack through c, with the shortest
// waits the API allows, retrying while the rack's owner is not reachable.
func coldReboot(ctx context.Context, s *clustersite.Site, c rmspb.RackManagerClient, rack string) (string, error) {
	for {
		resp, err := c.ExecuteColdReboot(ctx, &rmspb.ExecuteColdRebootRequest{
			Nodes:                        &rmspb.NodeSet{Nodes: s.Racks[rack]},
			PrestageShutdownFloorSeconds: u32(1), PrestageShutdownPollMaxSeconds: u32(30),
			DischargeFloorSeconds: u32(1), DischargePollMaxSeconds: u32(60),
			BmcUpFloorSeconds: u32(1), BmcUpPollMaxSeconds: u32(60),
			NvosHelloBackoffSeconds: u32(1), ComputeBootWaitSeconds: u32(1), PollIntervalSeconds: u32(1),
		})
		if err == nil && resp.GetResponse().GetJobId() != "" {
			return resp.GetResponse().GetJobId(), nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("cold reboot of %s: %v, %w", rack, resp.GetResponse(), err)
		}
		clustersite.Pause(ctx, 500*time.Millisecond)
	}
}

func u32(v uint32) *uint32 { return &v }

// jobState reads a job through c.
func jobState(ctx context.Context, c rmspb.RackManagerClient, id string) (*rmspb.JobStatus, error) {
	resp, err := c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: id})
	if err != nil {
		return nil, err
	}
	if len(resp.GetJobStates()) == 0 {
		return nil, fmt.Errorf("job %s: no state", id)
	}
	return resp.GetJobStates()[0], nil
}

func terminalState(st rmspb.JobExecutionState) bool {
	return st == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || st == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
}

// forEachProvider runs a site test once with each membership provider:
// automanaged, then etcd (a real etcd, member/etcdtest; skipped without
// one unless RMSD_TEST_REQUIRE_ETCD=1).
func forEachProvider(t *testing.T, run func(t *testing.T, etcdEndpoint string)) {
	t.Run("automanaged", func(t *testing.T) { run(t, "") })
	t.Run("etcd", func(t *testing.T) { run(t, etcdtest.Start(t)) })
}

// TestClusterKillingAMemberMidBatchLosesNoJob: three members serve a
// six-rack site; one firmware batch over compute trays of all six racks
// is sent through one member (split per rack under a cluster parent);
// while its children run, the member owning the most racks, some of whose
// children are running, is killed (SIGKILL). The parent and every child
// answer through every survivor; the killed member's children read Failed,
// interrupted by its leaving the cluster; the others complete; the parent
// ends Failed with those counts; the killed member's racks are owned and
// served again; no device was ever acted on by two workflows at once.
func TestClusterKillingAMemberMidBatchLosesNoJob(t *testing.T) {
	forEachProvider(t, killMemberMidBatch)
}

func killMemberMidBatch(t *testing.T, etcdEndpoint string) {
	art, rel := publishRelease(t)
	s := startClusterSite(t, 6, 3, etcdEndpoint)
	before := untilSettled(t, s, s.RackIDs(), s.Members...)
	// The victim: the member owning the most racks (six racks over three
	// members: at least two); the batch goes through another member.
	count := map[string]int{}
	for _, l := range before {
		count[l.Member]++
	}
	vi := 0
	for i, m := range s.Members {
		if count[m.ID] > count[s.Members[vi].ID] {
			vi = i
		}
	}
	victim := s.Members[vi]
	entry := s.Members[(vi+1)%len(s.Members)]

	ctx, cancel := context.WithTimeout(t.Context(), 3*clusterWait)
	defer cancel()
	// Every download of the release's compute BMC package is held by the
	// artifact server until the victim is dead: every child stays in its
	// first stage, running, so the victim certainly has running jobs when
	// it is killed, and the survivors' children complete once released.
	art.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	parent, children := applyRelease(ctx, t, entry, &rmspb.ApplyFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, Nodes: computeTrays(s, traysPerRack)})
	var running []string
	for {
		states, err := batchStates(ctx, entry.RMS(), parent)
		running = running[:0]
		for _, js := range states {
			if js.GetJobId() != parent && before[js.GetRackId()].Member == victim.ID &&
				js.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING {
				running = append(running, js.GetJobId())
			}
		}
		if err == nil && len(running) > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no child of %s's racks ran (%v): the kill would interrupt nothing", victim.ID, err)
		}
		clustersite.Pause(ctx, 100*time.Millisecond)
	}
	killed := time.Now()
	if err := s.Kill(vi); err != nil {
		t.Fatal(err)
	}
	art.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{})
	art.Release(1 << 20) // every held download, the dead member's connections gone
	var survivors []*clustersite.Member
	for _, p := range s.Members {
		if p != victim {
			survivors = append(survivors, p)
		}
	}
	after := untilSettled(t, s, s.RackIDs(), survivors...)
	owned := time.Since(killed)
	for len(s.NotServing()) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("racks %v not served by a survivor", s.NotServing())
		}
		clustersite.Pause(ctx, 100*time.Millisecond)
	}
	t.Logf("%s (%d racks, %d children running) killed; its racks owned again %s later, all served %s later (membership timeout %d s, etcd %q)",
		victim.ID, count[victim.ID], len(running), owned.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond),
		siteMembershipTimeout, etcdEndpoint)
	for rack, l := range after {
		if l.Member == victim.ID || (before[rack].Member == victim.ID && l.Epoch <= before[rack].Epoch) {
			t.Errorf("rack %s after the kill: %+v, before %+v; want a survivor under a higher epoch", rack, l, before[rack])
		}
	}

	// Through every survivor: the parent ends Failed with the killed
	// member's children as its failures; each of those (the running ones
	// among them) is Failed as interrupted, every other child Completed;
	// every child id answers on its own.
	want := fmt.Sprintf("interrupted: member %s left the cluster at stage", victim.ID)
	lost := 0
	for _, rack := range children {
		if before[rack].Member == victim.ID {
			lost++
		}
	}
	for _, p := range survivors {
		states := untilBatchEnded(ctx, t, p, parent)
		summary := fmt.Sprintf("Batch complete: %d/%d succeeded, %d failed", len(children)-lost, len(children), lost)
		if st := states[0]; st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || st.GetStateDescription() != summary {
			t.Errorf("parent %s through %s = %v %q, want FAILED %q", parent, p.ID, st.GetExecutionState(), st.GetStateDescription(), summary)
		}
		checkChildren(t, p, parent, states, children)
		for _, js := range states[1:] {
			rack := children[js.GetJobId()]
			switch {
			case before[rack].Member == victim.ID && (js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || !strings.Contains(js.GetErrorMessage(), want)):
				t.Errorf("child %s of rack %s (the killed member's) through %s = %v %q, want FAILED %q", js.GetJobId(), rack, p.ID, js.GetExecutionState(), js.GetErrorMessage(), want)
			case before[rack].Member != victim.ID && js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED:
				t.Errorf("child %s of rack %s (a survivor's) through %s = %v %q, want COMPLETED", js.GetJobId(), rack, p.ID, js.GetExecutionState(), js.GetErrorMessage())
			}
		}
		fw, err := p.RMS().GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: parent})
		if err != nil || fw.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED {
			t.Errorf("GetFirmwareJobStatus of parent %s through %s = %v, %v; want FAILED", parent, p.ID, fw.GetJobState(), err)
		}
	}
	// The racks serve again: a cold reboot (the rack's power domain) of
	// each of the killed member's racks is admitted through the entry
	// member: nothing of the interrupted children holds a node.
	for rack, l := range before {
		if l.Member != victim.ID {
			continue
		}
		if _, err := coldReboot(ctx, s, entry.RMS(), rack); err != nil {
			t.Errorf("rack %s after the takeover: %v", rack, err)
		}
	}
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}
}

// TestClusterRollingRestartDuringABatchLosesNoJob: three members serve a
// six-rack site; one firmware batch over compute trays of all six racks
// (a stored release) is sent through one member; once children of the
// first member to stop are running, each member in turn is stopped
// (SIGTERM: it drains, its racks' jobs end within the drain window, it
// hands its racks over) and started again. The parent and every child
// complete and answer through every member afterwards, and no device was
// acted on by two workflows at once.
func TestClusterRollingRestartDuringABatchLosesNoJob(t *testing.T) {
	forEachProvider(t, rollingRestartDuringABatch)
}

func rollingRestartDuringABatch(t *testing.T, etcdEndpoint string) {
	_, rel := publishRelease(t)
	s := startClusterSite(t, 6, 3, etcdEndpoint)
	before := untilSettled(t, s, s.RackIDs(), s.Members...)
	ctx, cancel := context.WithTimeout(t.Context(), 4*clusterWait)
	defer cancel()
	// A stored release: ApplyFirmwareObject's temporary caches would share
	// the site's firmware_dir, which a starting member empties.
	object := addRelease(ctx, t, s.Members[0].RMS(), rel)
	// The members stop in the order of the racks they own, most first, so
	// that the first drain has children to wait for.
	count := map[string]int{}
	for _, l := range before {
		count[l.Member]++
	}
	order := []int{0, 1, 2}
	slices.SortStableFunc(order, func(a, b int) int { return count[s.Members[b].ID] - count[s.Members[a].ID] })
	first := s.Members[order[0]]
	parent, children := applyRelease(ctx, t, s.Members[0],
		&rmspb.ApplyStoredFirmwareObjectRequest{ObjectId: object, Nodes: computeTrays(s, traysPerRack)})
	for {
		states, err := batchStates(ctx, s.Members[0].RMS(), parent)
		if err == nil && slices.ContainsFunc(states[1:], func(js *rmspb.JobStatus) bool {
			return before[js.GetRackId()].Member == first.ID && js.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING
		}) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no child of %s's racks ran (%v)", first.ID, err)
		}
		clustersite.Pause(ctx, 100*time.Millisecond)
	}
	for _, i := range order {
		p := s.Members[i]
		stopped := time.Now()
		// Stop fails unless the member exits 0 after SIGTERM.
		if err := s.Stop(i); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%d racks) drained and stopped in %s (etcd %q)", p.ID, count[p.ID], time.Since(stopped).Round(10*time.Millisecond), etcdEndpoint)
		if err := s.Restart(i); err != nil {
			t.Fatal(err)
		}
	}
	untilSettled(t, s, s.RackIDs(), s.Members...)
	for _, p := range s.Members {
		states := untilBatchEnded(ctx, t, p, parent)
		summary := fmt.Sprintf("Batch complete: %d/%d succeeded, 0 failed", len(children), len(children))
		if st := states[0]; st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || st.GetStateDescription() != summary {
			t.Errorf("parent %s through %s = %v %q %q, want COMPLETED %q", parent, p.ID, st.GetExecutionState(), st.GetStateDescription(), st.GetErrorMessage(), summary)
		}
		checkChildren(t, p, parent, states, children)
		for _, js := range states[1:] {
			if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
				t.Errorf("child %s of rack %s through %s = %v %q, want COMPLETED", js.GetJobId(), js.GetRackId(), p.ID, js.GetExecutionState(), js.GetErrorMessage())
			}
		}
	}
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}
}

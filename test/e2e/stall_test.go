package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/storetest"
)

// storeTimeout is rmsd's bound on one journal commit (actors.DefaultStoreTimeout).
const storeTimeout = 5 * time.Second

// TestKill9WithAStalledPostgresLosesNoAcknowledgedJob runs rmsd on
// PostgreSQL through a proxy that stops forwarding (no reset: the
// database just stops answering). A switch password rotation answered
// before the stall has its id; the ones asked during the stall are
// refused UNAVAILABLE within a few store deadlines and hand out no id;
// the first job's status still answers meanwhile. rmsd is then killed
// with SIGKILL, still stalled, and started again on the database: every
// id it handed out answers GetJobStatus.
func TestKill9WithAStalledPostgresLosesNoAcknowledgedJob(t *testing.T) {
	direct := storetest.TempPostgresDatabase(t)
	proxy, via := storetest.ProxyPostgres(t, direct)

	dir := t.TempDir()
	cfg := simulation(t, dir, 93)
	d := startDaemonIn(t, dir, append(append([]string{}, insecureEnv...), "DATABASE_URL="+via), "--config", cfg, "--simulate")
	client := dial(t, d)
	var switches []*rmspb.NodeInfo
	for _, n := range simulatedNodes(t, dir).GetNodes() {
		if n.GetType() == rmspb.NodeType_SWITCH_GB200_NVIDIA {
			switches = append(switches, n)
		}
	}
	if len(switches) < 4 {
		t.Fatalf("%d simulated switches, want 4", len(switches))
	}
	rotate := func(ctx context.Context, i int) (*rmspb.UpdateSwitchSystemPasswordResponse, error) {
		return client.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
			Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{switches[i]}}, Username: "admin", Password: "Rotated-e2e-9"})
	}

	first, err := rotate(rpc(t), 0)
	if err != nil || first.GetResponse().GetJobId() == "" {
		t.Fatalf("rotation before the stall: %v, %v", first.GetResponse(), err)
	}
	acknowledged := []string{first.GetResponse().GetJobId()}

	proxy.Stall()
	for i := 1; i < 4; i++ {
		start := time.Now()
		resp, err := rotate(rpc(t), i)
		took := time.Since(start)
		if err == nil {
			// Acceptable only if its admission reached the database after
			// all; the restart below checks that it did.
			t.Logf("rotation %d during the stall answered %v after %s", i, resp.GetResponse().GetStatus(), took)
			if id := resp.GetResponse().GetJobId(); id != "" {
				acknowledged = append(acknowledged, id)
			}
			t.Errorf("rotation %d during the stall: %v (job %q), want UNAVAILABLE", i, resp.GetResponse().GetMessage(), resp.GetResponse().GetJobId())
			continue
		}
		if status.Code(err) != codes.Unavailable {
			t.Errorf("rotation %d during the stall: %v, want UNAVAILABLE", i, err)
		}
		if took > 4*storeTimeout {
			t.Errorf("rotation %d during the stall refused after %s, want within 4× the store deadline %s", i, took, storeTimeout)
		}
	}
	readCtx, cancel := context.WithTimeout(context.Background(), 4*storeTimeout)
	if _, err := client.GetJobStatus(readCtx, &rmspb.GetJobStatusRequest{JobId: acknowledged[0]}); err != nil {
		t.Errorf("status of %s during the stall: %v", acknowledged[0], err)
	}
	cancel()

	kill9(t, d)
	proxy.Cut() // ends the dead daemon's sessions (and its lock) on the server
	proxy.Restore()

	d = startDaemonIn(t, dir, append(append([]string{}, insecureEnv...), "DATABASE_URL="+direct), "--config", cfg, "--simulate")
	client = dial(t, d)
	for _, id := range acknowledged {
		s, err := client.GetJobStatus(rpc(t), &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
		if err != nil || len(s.GetJobStates()) < 2 {
			t.Errorf("job %s after the stall and kill -9: %v, %v; want the job and its child", id, s.GetJobStates(), err)
		}
	}
	stopDaemon(t, d)
}

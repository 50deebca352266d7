package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/storetest"
)

// The job journal end to end: rmsd --simulate is killed with SIGKILL in the
// middle of work and started again on the same store. Every job id it had
// handed out must answer, what was in flight must read Failed with the
// interruption reason, and no node may stay held.

// journalStores are the stores the kill tests run on; each has its own
// simulated network so the tests do not share loopback addresses.
var journalStores = []struct {
	name    string
	network int
	env     func(t *testing.T, dir string) []string
}{
	{"sqlite", 71, func(t *testing.T, dir string) []string {
		return []string{"RMS_STORAGE__SQLITE_PATH=" + filepath.Join(dir, "rmsd.db")}
	}},
	{"postgres", 72, func(t *testing.T, dir string) []string {
		return []string{"DATABASE_URL=" + storetest.TempPostgresDatabase(t)}
	}},
}

// simulation writes a --simulate configuration for network into dir.
func simulation(t *testing.T, dir string, network int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "firmware"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.toml")
	cfg := fmt.Sprintf(`
port = 0
[server]
drain_delay_seconds = 0
[metrics]
port = 0
[workflows]
firmware_dir = %q
[simulator]
network = %d
time_scale = 0.01
bmc_port = 0
nvue_port = 0
ssh_port = 0
nodes_file = %q
`, filepath.Join(dir, "firmware"), network, filepath.Join(dir, "nodes.json"))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kill9 kills the daemon with SIGKILL and waits for it to be gone.
func kill9(t *testing.T, d *daemon) {
	t.Helper()
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range d.lines {
	}
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		t.Fatal("rmsd still running 20s after SIGKILL")
	}
}

// dial connects to the daemon. Its log lines are drained from then on: a
// thousand jobs log more than the harness buffers, and a daemon blocked on
// its stdout would stall.
func dial(t *testing.T, d *daemon) rmspb.RackManagerClient {
	t.Helper()
	go func() {
		for range d.lines {
		}
	}()
	conn, err := grpc.NewClient(d.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return rmspb.NewRackManagerClient(conn)
}

func rpc(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func simulatedNodes(t *testing.T, dir string) *rmspb.NodeSet {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var nodes rmspb.NodeSet
	if err := protojson.Unmarshal(data, &nodes); err != nil {
		t.Fatal(err)
	}
	return &nodes
}

const interrupted = "interrupted by restart of rmsd at stage "

// unusedAddr is the i-th address (i < 60,000) of the simulated network of
// addr (127.N.0.x) where no simulated device listens: 127.N.10.1 on.
func unusedAddr(addr string, i int) string {
	network, _, _ := strings.Cut(strings.TrimPrefix(addr, "127."), ".")
	return fmt.Sprintf("127.%s.%d.%d", network, 10+i/250, 1+i%250)
}

// thousandTrays is a firmware batch of 1,000 compute nodes shaped like the
// simulated trays, each with a BMC address of its own in the simulated
// network where nothing listens (one BMC named under two ids is one
// device, and the job engine would admit it once): every child runs and
// fails on its own, so the batch is still under way when it is killed.
func thousandTrays(t *testing.T, dir string, prefix string) *rmspb.BatchUpdateFirmwareRequest {
	t.Helper()
	var trays []*rmspb.NodeInfo
	for _, n := range simulatedNodes(t, dir).GetNodes() {
		if n.GetType() == rmspb.NodeType_COMPUTE_GB200_NVIDIA {
			trays = append(trays, n)
		}
	}
	if len(trays) == 0 {
		t.Fatal("no simulated compute trays")
	}
	set := &rmspb.NodeSet{}
	for i := range 1000 {
		n := proto.Clone(trays[i%len(trays)]).(*rmspb.NodeInfo)
		n.NodeId, n.RackId = fmt.Sprintf("%s-%04d", prefix, i), "e2e-rack"
		n.BmcEndpoint.Interface.IpAddress = unusedAddr(n.GetBmcEndpoint().GetInterface().GetIpAddress(), i)
		// A simulated tray's host OS (in-band NIC firmware) is one device:
		// these BMC-only copies leave it out, or they would share it.
		n.HostEndpoint = nil
		set.Nodes = append(set.Nodes, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "firmware", "bmc.fwpkg"), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	return &rmspb.BatchUpdateFirmwareRequest{Nodes: set, FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
		int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Targets: []*rmspb.FirmwareTarget{{Filename: "bmc.fwpkg", Target: "BMC"}}},
	}}
}

func TestKill9DuringAThousandChildBatchLosesNoJobAndHoldsNoNode(t *testing.T) {
	for _, st := range journalStores {
		t.Run(st.name, func(t *testing.T) {
			dir := t.TempDir()
			keys := filepath.Join(dir, "store-keys")
			if err := os.WriteFile(keys, []byte("k1:"+base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(append([]string{"RMS_STORAGE__ENCRYPTION_KEY_FILE=" + keys}, insecureEnv...), st.env(t, dir)...)
			cfg := simulation(t, dir, st.network)
			d := startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
			client := dial(t, d)
			req := thousandTrays(t, dir, "fw")
			registered := proto.Clone(req.GetNodes().GetNodes()[0]).(*rmspb.NodeInfo)
			registered.NodeId, registered.RackId = "registered-1", "registered-rack"
			registered.BmcEndpoint.Interface.IpAddress = unusedAddr(registered.GetBmcEndpoint().GetInterface().GetIpAddress(), 59_999)
			if r, err := client.CreateNodes(rpc(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{registered}}}); err != nil || r.GetStats().GetSuccessfulNodes() != 1 {
				t.Fatalf("CreateNodes: %v, %v", r.GetResponse(), err)
			}
			resp, err := client.BatchUpdateFirmware(rpc(t), req)
			if err != nil || len(resp.GetJobs()) != 1000 || resp.GetResponse().GetJobId() == "" {
				t.Fatalf("BatchUpdateFirmware: %d jobs, %v, %v", len(resp.GetJobs()), resp.GetResponse(), err)
			}
			ids := []string{resp.GetResponse().GetJobId()}
			for _, j := range resp.GetJobs() {
				ids = append(ids, j.GetJobId())
			}
			kill9(t, d)

			d = startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
			client = dial(t, d)
			interruptedJobs := 0
			reads := rpc(t) // one deadline for all the reads
			for _, id := range ids {
				s, err := client.GetFirmwareJobStatus(reads, &rmspb.GetFirmwareJobStatusRequest{JobId: id})
				if err != nil || s.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
					t.Fatalf("job %s after kill -9: %v %v", id, s, err)
				}
				switch s.GetJobState() {
				case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED, rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED:
				default:
					t.Fatalf("job %s after kill -9 is %v, want terminal", id, s.GetJobState())
				}
				if strings.HasPrefix(s.GetErrorMessage(), interrupted) {
					interruptedJobs++
				}
			}
			if interruptedJobs == 0 {
				t.Errorf("no job of the batch reads %q after kill -9", interrupted)
			}
			inv, err := client.ListNodeInventory(rpc(t), &rmspb.ListNodeInventoryRequest{})
			if err != nil || !slices.ContainsFunc(inv.GetNodes(), func(n *rmspb.NodeInventoryInfo) bool {
				return n.GetRackId() == "registered-rack" && n.GetNodeId() == "registered-1"
			}) {
				t.Errorf("registered node not back after kill -9 (%v)", err)
			}
			// No node is held: the same batch is admitted again, every node.
			again, err := client.BatchUpdateFirmware(rpc(t), req)
			if err != nil || len(again.GetJobs()) != 1000 {
				t.Fatalf("the same batch after the restart: %d jobs, %v, %v", len(again.GetJobs()), again.GetResponse().GetMessage(), err)
			}
			stopDaemon(t, d)
		})
	}
}

func TestKill9DuringAColdRebootInterruptsItAndFreesTheRack(t *testing.T) {
	for _, st := range journalStores {
		t.Run(st.name, func(t *testing.T) {
			dir := t.TempDir()
			env := append(append([]string{}, insecureEnv...), st.env(t, dir)...)
			cfg := simulation(t, dir, st.network+10)
			d := startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
			client := dial(t, d)
			nodes := simulatedNodes(t, dir)
			resp, err := client.ExecuteColdReboot(rpc(t), &rmspb.ExecuteColdRebootRequest{Nodes: nodes})
			if err != nil || resp.GetResponse().GetJobId() == "" {
				t.Fatalf("ExecuteColdReboot: %v %v", resp.GetResponse(), err)
			}
			id := resp.GetResponse().GetJobId()
			var stage string
			// Until the runbook is under way, read every 20 ms for at most a
			// minute (reads' deadline).
			reads := rpc(t)
			for {
				s, err := client.GetJobStatus(reads, &rmspb.GetJobStatusRequest{JobId: id})
				if err != nil || len(s.GetJobStates()) == 0 {
					t.Fatalf("cold reboot %s: %v, %v", id, s, err)
				}
				j := s.GetJobStates()[0]
				if j.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING && j.GetStateDescription() != "" {
					stage = j.GetStateDescription()
					break
				}
				if j.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_QUEUED {
					t.Fatalf("cold reboot never ran: %v", j)
				}
				select {
				case <-reads.Done():
					t.Fatalf("cold reboot still queued after a minute: %v", j)
				case <-time.After(20 * time.Millisecond):
				}
			}
			kill9(t, d)

			d = startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
			client = dial(t, d)
			s, err := client.GetJobStatus(rpc(t), &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
			if err != nil {
				t.Fatalf("cold reboot after kill -9: %v", err)
			}
			j := s.GetJobStates()[0]
			if j.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || !strings.HasPrefix(j.GetErrorMessage(), interrupted) {
				t.Fatalf("cold reboot after kill -9: %v, want Failed %q... (it was at %q)", j, interrupted, stage)
			}
			if len(s.GetJobStates()) != 1+len(nodes.GetNodes()) {
				t.Errorf("cold reboot after kill -9 has %d job states, want it and %d reservations", len(s.GetJobStates()), len(nodes.GetNodes()))
			}
			again, err := client.ExecuteColdReboot(rpc(t), &rmspb.ExecuteColdRebootRequest{Nodes: nodes})
			if err != nil || again.GetResponse().GetJobId() == "" {
				t.Fatalf("a cold reboot of the same rack after the restart: %v %v", again.GetResponse(), err)
			}
			stopDaemon(t, d)
		})
	}
}

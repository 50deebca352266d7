package rmsserver

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fabricsync"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// fabricTestTiming keeps the fabric client's protocol (verification
// re-reads, a restart window) at test speed, with room for a loaded
// machine: the simulated switches run 1000× faster than real time.
var fabricTestTiming = fabric.Timing{
	VerifyAttempts: 40, VerifyInterval: 25 * time.Millisecond, ManagerSettle: time.Millisecond,
	GNMISettle: time.Millisecond, GNMIVerifyDelays: []time.Duration{10 * time.Millisecond},
	ConfiguredWindow: 20 * time.Second, ConfiguredPoll: 10 * time.Millisecond,
}

// reconcileRack is a simulated rack behind a server wired for the scale-up
// fabric reconcile as `rmsd --simulate` is: real fabric clients (NVUE,
// SSH, NMX-C over loopback sockets) of the simulated NVOS hosts, in
// insecure_switch mode, every log captured.
type reconcileRack struct {
	*simRack
	v2   rmspbv2.RackManagerV2Client
	logs *syncBuffer

	mu sync.Mutex
	// gate, when set, holds every WaitConfigured until it is closed.
	gate chan struct{}
}

func startReconcileRack(t testing.TB) *reconcileRack {
	t.Helper()
	logs := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	fleet, err := sim.Start(context.Background(), sim.Options{TimeScale: 0.001, Logger: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	r := &reconcileRack{simRack: &simRack{fleet: fleet}, logs: logs}
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		if sn.Host.Host() != "" {
			host := sn.Host
			n.Host = &host
		}
		r.nodes = append(r.nodes, n)
	}
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second})
	t.Cleanup(pool.Close)
	nv, err := nvue.NewPool(nvue.Options{Port: fleet.NVUEPort(), PollInterval: 2 * time.Millisecond, WaitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	r.runner = nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.New(logs)}, 64)
	r.engine = newTestEngine(t)
	ssh := sshsftp.Options{Port: fleet.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 5 * time.Second}
	deps := Deps{Nodes: r.runner, Jobs: r.engine, SwitchCert: SwitchCertConfig{Insecure: true},
		FabricSwitch: func(n hw.Node, _ string) (fabricsync.Switch, error) {
			host := r.host(n.ID)
			if host == nil || n.Host == nil {
				return nil, errNoHost
			}
			sw, err := fabric.New(n.ID, *n.Host, fabric.Options{NVUE: nv, SSH: ssh, Timing: fabricTestTiming,
				NMXC: nmxc.Options{Port: host.NMXPort(), HelloAttempts: 5, HelloRetry: 10 * time.Millisecond, RequestTimeout: 10 * time.Second}})
			if err != nil {
				return nil, err
			}
			return &gatedSwitch{Switch: sw, rack: r}, nil
		}}
	ts := startServer(t, Options{Logger: zerolog.New(logs).Level(zerolog.DebugLevel), Deps: deps})
	conn := dial(t, ts.addr, nil)
	r.client = rmspb.NewRackManagerClient(conn)
	r.v2 = rmspbv2.NewRackManagerV2Client(conn)
	return r
}

var errNoHost = errors.New("no simulated NVOS host")

// host is the simulated NVOS host of a switch, nil for another node.
func (r *reconcileRack) host(id string) *sim.NVOSHost {
	for _, sn := range r.fleet.Nodes() {
		if sn.ID == id {
			h, _ := sn.Switch.(*sim.NVOSHost)
			return h
		}
	}
	return nil
}

// hold makes every WaitConfigured wait until the returned release is
// called.
func (r *reconcileRack) hold() (release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := make(chan struct{})
	r.gate = g
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.gate == g {
				r.gate = nil
			}
			close(g)
		})
	}
}

// gatedSwitch is a real fabric client whose WaitConfigured first waits at
// the rack's gate, when one is set: a test holds a reconcile mid-way.
type gatedSwitch struct {
	*fabric.Switch
	rack *reconcileRack
}

func (g *gatedSwitch) WaitConfigured(ctx context.Context) (fabric.AppStatus, error) {
	g.rack.mu.Lock()
	gate := g.rack.gate
	g.rack.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return fabric.AppStatus{}, ctx.Err()
		}
	}
	return g.Switch.WaitConfigured(ctx)
}

// switches are the rack's switch nodes.
func (r *reconcileRack) switches() []hw.Node { return r.ofKind(hw.KindSwitch) }

// lowestSlot is the switch at the lowest slot, as GetNodeDeviceInfo reads
// it.
func (r *reconcileRack) lowestSlot(t testing.TB) string {
	t.Helper()
	resp, err := r.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(r.switches()...)})
	if err != nil {
		t.Fatal(err)
	}
	infos := resp.GetNodeDeviceDetails()
	if len(infos) != len(r.switches()) {
		t.Fatalf("device info of %d switches: %v", len(r.switches()), resp)
	}
	sort.Slice(infos, func(i, j int) bool {
		if infos[i].GetSlotNumber() != infos[j].GetSlotNumber() {
			return infos[i].GetSlotNumber() < infos[j].GetSlotNumber()
		}
		return infos[i].GetNodeId() < infos[j].GetNodeId()
	})
	return infos[0].GetNodeId()
}

// switchState is one simulated switch's fabric state.
type switchState struct {
	Enabled            bool
	Primary, Secondary string
	Topology, Manager  string
	Encryption         string
}

// states reads every simulated switch's fabric state (restarts apart).
func (r *reconcileRack) states() map[string]switchState {
	out := map[string]switchState{}
	for _, n := range r.switches() {
		h := r.host(n.ID)
		var s switchState
		s.Enabled = h.ClusterEnabled()
		s.Primary, s.Secondary = h.NodeIPs()
		s.Topology, _ = h.StaticConfig(fabric.FileFM, fabric.KeyTopology)
		s.Manager = h.AppManager(fabric.AppController)
		s.Encryption, _, _ = h.NMXMTLS()
		out[n.ID] = s
	}
	return out
}

// saves counts every switch's config saves.
func (r *reconcileRack) saves() map[string]int {
	out := map[string]int{}
	for _, n := range r.switches() {
		out[n.ID] = r.host(n.ID).Saves()
	}
	return out
}

// submit starts a reconcile of the rack's switches.
func (r *reconcileRack) submit(t testing.TB, req *rmspbv2.ConfigureScaleUpFabricManagerRequest) string {
	t.Helper()
	resp, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), req)
	if err != nil {
		t.Fatalf("ConfigureScaleUpFabricManager: %v", err)
	}
	if resp.GetJobId() == "" {
		t.Fatal("no job id")
	}
	return resp.GetJobId()
}

// wait polls the job until it is terminal.
func (r *reconcileRack) wait(t testing.TB, id string) *rmspb.JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		resp, err := r.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: id})
		if err != nil {
			t.Fatalf("GetJobStatus: %v", err)
		}
		for _, js := range resp.GetJobStates() {
			if js.GetJobId() == id && (js.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED ||
				js.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED) {
				return js
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s did not end", id)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// reconcile submits req and waits for its job.
func (r *reconcileRack) reconcile(t testing.TB, req *rmspbv2.ConfigureScaleUpFabricManagerRequest) *rmspb.JobStatus {
	t.Helper()
	return r.wait(t, r.submit(t, req))
}

// fabricRequest is a reconcile of every switch of the rack to topology.
func (r *reconcileRack) fabricRequest(topology string) *rmspbv2.ConfigureScaleUpFabricManagerRequest {
	return &rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(r.switches()...),
		Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: topology}}
}

// fabricStatus decodes a completed job's result_json.
func fabricStatus(t testing.TB, js *rmspb.JobStatus) *rmspb.ScaleUpFabricStatus {
	t.Helper()
	if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Fatalf("job %s: %v: %s (%s)", js.GetJobId(), js.GetExecutionState(), js.GetErrorMessage(), js.GetStateDescription())
	}
	st := &rmspb.ScaleUpFabricStatus{}
	if err := protojson.Unmarshal([]byte(js.GetResultJson()), st); err != nil {
		t.Fatalf("result_json %q: %v", js.GetResultJson(), err)
	}
	return st
}

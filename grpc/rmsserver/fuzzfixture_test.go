package rmsserver

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/messages"
)

// fuzzFixture is the server the fuzzed requests go to.
type fuzzFixture struct {
	client rmspb.RackManagerClient
	v2     rmspbv2.RackManagerV2Client
	deps   Deps
	engine *actors.Engine
	// sinkPort is where every node's BMC and switch host "are": a loopback
	// port that refuses every connection.
	sinkPort uint32
	nodes    []hw.Node // registered in every registry the fixture makes
}

// sinkAddr returns the loopback address that stands for addr: one of
// 40,000 where nothing listens either, by a hash of addr, so that the
// distinct devices of a request stay distinct (the job engine holds
// devices by address) without the fixture remembering anything.
func sinkAddr(addr string) string {
	h := fnv.New32a()
	h.Write([]byte(addr))
	n := h.Sum32() % (200 * 200)
	return fmt.Sprintf("127.0.%d.%d", 10+n/200, 1+n%200)
}

// fuzzJobs are jobs the fixture's engine holds, by fixed id, so that the
// job status seeds find some.
var fuzzJobs = struct{ done, failed, parent, child string }{"fuzz-done", "fuzz-failed", "fuzz-parent", "fuzz-child"}

func newFuzzFixture(f *testing.F) *fuzzFixture {
	fx := &fuzzFixture{sinkPort: uint32(startSink(f))}
	fx.engine = newTestEngine(f)
	runner := newOfflineRunner(f)
	fx.nodes = fuzzRackNodes(int(fx.sinkPort))
	// The catalog holds fuzzObjects; an object a fuzzed request adds is
	// deleted again (settle), so the catalog does not grow over a run.
	// Firmware updates find the fuzzPackages in firmware_dir and poll the
	// (refusing) sink every few milliseconds; settle ends every job they
	// start.
	fx.deps = Deps{Version: "fuzz", Jobs: fx.engine, Nodes: runner, Racks: fx.registry(f), Catalog: fuzzCatalog(f),
		FirmwareDir: fuzzFirmwareDir(f), FirmwareTiming: fastFirmwareTiming, Fabric: fuzzFabric(f, int(fx.sinkPort)), Validation: fuzzValidation(f)}
	// Panics and errors of the server reach the fuzzer's output.
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.ErrorLevel)
	ts := startServer(f, Options{Deps: fx.deps, Logger: log})
	// Not dial: the fuzzed requests must not be recorded as seeds.
	conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = conn.Close() })
	fx.client = rmspb.NewRackManagerClient(conn)
	fx.v2 = rmspbv2.NewRackManagerV2Client(conn)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, spec := range []struct {
		id string
		wf messages.Workflow
	}{
		{fuzzJobs.done, finish("Completed", `{"status":"completed"}`)},
		{fuzzJobs.failed, failWith(messages.ErrorTimeout, "poll deadline passed")},
	} {
		if _, err := fx.engine.Create(ctx, messages.JobSpec{ID: spec.id, Type: messages.TypeFirmwareUpdate, RackID: "fuzz-jobs", NodeID: spec.id},
			spec.wf, nil); err != nil {
			f.Fatal(err)
		}
	}
	if _, err := fx.engine.Create(ctx, messages.JobSpec{ID: fuzzJobs.parent, Type: messages.TypeSwitchSystemImageUpdate}, idle, nil); err != nil {
		f.Fatal(err)
	}
	if _, err := fx.engine.Create(ctx, messages.JobSpec{ID: fuzzJobs.child, ParentID: fuzzJobs.parent, Type: messages.TypeSwitchSystemImageUpdate,
		RackID: "fuzz-jobs", NodeID: "switch-1"}, idle, nil); err != nil {
		f.Fatal(err)
	}
	if err := fx.engine.Wait(ctx, fuzzJobs.done, fuzzJobs.failed); err != nil {
		f.Fatal(err)
	}
	return fx
}

// registry returns a registry holding the fixture's rack.
func (fx *fuzzFixture) registry(t testing.TB) *racks.Registry {
	reg := racks.New([]string{"gb200-prod"})
	for _, err := range reg.Create(fx.nodes) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// freshManager is the handler set of a direct family for one input: the
// fixture's engine and runner, and a registry of its own.
func (fx *fuzzFixture) freshManager(t testing.TB) *rackManager {
	deps := fx.deps
	deps.Racks = fx.registry(t)
	return &rackManager{deps: deps, log: zerolog.Nop()}
}

// settle ends what an answered request left running: a cold reboot or a
// firmware update that started is cancelled and waited for (a firmware
// batch's children, then its parent, which ends with them), so that no job
// outlives the input and nodes are free for the next one; a firmware
// object added is deleted.
func (fx *fuzzFixture) settle(t *testing.T, reply proto.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), fuzzCallTimeout)
	defer cancel()
	var started []string // jobs with a workflow, to cancel
	var parent string    // a firmware batch's parent, ended by its children
	switch r := reply.(type) {
	case *rmspb.AddFirmwareObjectResponse:
		if err := fx.deps.Catalog.Delete(ctx, r.GetObject().GetId()); err != nil {
			t.Fatalf("delete the firmware object %q a fuzzed request added: %v", r.GetObject().GetId(), err)
		}
		return
	case *rmspb.ExecuteColdRebootResponse:
		started = append(started, r.GetResponse().GetJobId())
	case *rmspbv2.ConfigureScaleUpFabricManagerResponse:
		started = append(started, r.GetJobId())
	case *rmspb.UpdateFirmwareResponse:
		started = append(started, r.GetJobId())
	case *rmspb.BatchUpdateFirmwareByNodeTypeResponse:
		parent, started = r.GetResponse().GetJobId(), firmwareJobIDs(r.GetJobs())
	case *rmspb.BatchUpdateFirmwareResponse:
		parent, started = r.GetResponse().GetJobId(), firmwareJobIDs(r.GetJobs())
	case *rmspb.ApplyStoredFirmwareObjectResponse:
		parent, started = r.GetResponse().GetJobId(), firmwareJobIDs(r.GetJobs())
	case *rmspb.ApplyFirmwareObjectResponse:
		parent, started = r.GetResponse().GetJobId(), firmwareJobIDs(r.GetJobs())
	default:
		parent, started = fx.switchAdminJobs(t, reply)
	}
	var wait []string
	for _, id := range started {
		if id == "" {
			continue
		}
		if _, err := fx.engine.Cancel(ctx, id); err != nil {
			t.Fatalf("cancel job %s a fuzzed request started: %v", id, err)
		}
		wait = append(wait, id)
	}
	if parent != "" {
		wait = append(wait, parent)
	}
	if err := fx.engine.Wait(ctx, wait...); err != nil {
		t.Fatalf("jobs %v a fuzzed request started did not end: %v", wait, err)
	}
}

func firmwareJobIDs(jobs []*rmspb.NodeFirmwareJobInfo) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.GetJobId()
	}
	return ids
}

// fuzzPackages are the package files the fuzz fixture's firmware_dir
// holds: the names the firmware update tests stage, so that their recorded
// requests get past the file checks and start jobs.
var fuzzPackages = []string{"bmc-direct.fwpkg", "ok.fwpkg", "psu-c1.09.tar", "bmc-profile.fwpkg", "bmc-batch.fwpkg"}

// fuzzFirmwareDir is the fuzz fixture's firmware_dir, holding small
// fuzzPackages.
func fuzzFirmwareDir(f *testing.F) string {
	dir := f.TempDir()
	for _, name := range fuzzPackages {
		if err := os.WriteFile(filepath.Join(dir, name), sim.FirmwarePackage("fuzz-1.0", 256), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	return dir
}

// fuzzRackNodes is a GB200 rack named as the simulator names its racks (so
// the tests' requests for registered nodes find them), every endpoint on
// the sink's port of a loopback address of its own (a device is registered
// once), where nothing listens either.
func fuzzRackNodes(sinkPort int) []hw.Node {
	var nodes []hw.Node
	add := func(kind string, n int, t hw.NodeType, host bool) {
		for i := 1; i <= n; i++ {
			addr := fmt.Sprintf("127.0.%d.%d", len(nodes)/200+1, len(nodes)%200+1)
			node := hw.Node{ID: fmt.Sprintf("rack-001-%s-%02d", kind, i), RackID: "rack-001", Type: t,
				BMC: &hw.Endpoint{IP: addr, Port: sinkPort, Credentials: hw.UserPass("admin", "fuzz")}}
			if host {
				node.Host = &hw.Endpoint{IP: addr, Port: sinkPort, Credentials: hw.UserPass("admin", "fuzz")}
			}
			nodes = append(nodes, node)
		}
	}
	add("compute", 18, hw.ComputeGB200Nvidia, false)
	add("switch", 9, hw.SwitchGB200Nvidia, true)
	add("powershelf", 8, hw.PowerShelfGB200Liteon, false)
	return nodes
}

// startSink holds a loopback TCP port without listening on it: every
// connection to it is refused at once, and no other process can take the
// port while the fuzzing runs. It is the only place a fuzzed request's
// nodes can reach (see pointAtSink).
func startSink(t testing.TB) int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}

// pointAtSink moves every endpoint of the request's nodes that could be
// dialled to the sink, so that fuzzing never reaches (or resolves) a real
// address, another test's simulator included. What the server refuses
// before dialling (an address that is no IP or host name, a port beyond
// 65535) is left as the fuzzer made it.
func (fx *fuzzFixture) pointAtSink(req proto.Message) {
	type withNodes interface{ GetNodes() *rmspb.NodeSet }
	type withNode interface{ GetNode() *rmspb.NodeInfo }
	if r, ok := req.(withNode); ok && r.GetNode() != nil {
		ni := r.GetNode()
		for _, ep := range append([]*rmspb.Endpoint{ni.GetBmcEndpoint(), ni.GetHostEndpoint()}, ni.GetAdditionalHostEndpoints()...) {
			fx.pointEndpointAtSink(ep)
		}
	}
	r, ok := req.(withNodes)
	if !ok {
		return
	}
	for _, ni := range r.GetNodes().GetNodes() {
		for _, ep := range append([]*rmspb.Endpoint{ni.GetBmcEndpoint(), ni.GetHostEndpoint()}, ni.GetAdditionalHostEndpoints()...) {
			fx.pointEndpointAtSink(ep)
		}
	}
}

func (fx *fuzzFixture) pointEndpointAtSink(ep *rmspb.Endpoint) {
	ifc := ep.GetInterface()
	if ifc == nil {
		return
	}
	dialable := func(s string) bool { return s != "" && hw.CheckAddress(s) == nil }
	if dialable(ifc.GetIpAddress()) || (ifc.GetIpAddress() == "" && dialable(ifc.GetHostName())) {
		ifc.IpAddress = sinkAddr(ifc.GetIpAddress() + "|" + ifc.GetHostName())
	}
	if ep.GetPort() <= 65535 {
		ep.Port = fx.sinkPort
	}
}

// fixtureSeeds are requests that reach the fixture's own state (its rack
// and jobs), beside the seeds the tests recorded.
func fixtureSeeds(method string) []proto.Message {
	switch method {
	case rmspb.RackManager_GetJobStatus_FullMethodName:
		return []proto.Message{&rmspb.GetJobStatusRequest{JobId: fuzzJobs.parent, IncludeChildJobStates: true},
			&rmspb.GetJobStatusRequest{JobId: fuzzJobs.failed}}
	case rmspb.RackManager_GetFirmwareJobStatus_FullMethodName:
		return []proto.Message{&rmspb.GetFirmwareJobStatusRequest{JobId: fuzzJobs.done}}
	case rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName:
		return []proto.Message{&rmspb.GetSwitchSystemImageJobStatusRequest{JobId: fuzzJobs.child}}
	case rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName:
		return []proto.Message{&rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: fuzzJobs.parent}}
	case rmspb.RackManager_GetNodeFirmwareInventory_FullMethodName:
		return []proto.Message{&rmspb.GetNodeFirmwareInventoryRequest{RackId: "rack-001", NodeId: "rack-001-switch-01"}}
	case rmspb.RackManager_GetRackFirmwareInventory_FullMethodName:
		return []proto.Message{&rmspb.GetRackFirmwareInventoryRequest{RackId: "rack-001"}}
	case rmspb.RackManager_GetFirmwareObject_FullMethodName:
		return []proto.Message{&rmspb.GetFirmwareObjectRequest{Id: fuzzObjects.plain}}
	case rmspb.RackManager_SetDefaultFirmwareObject_FullMethodName:
		return []proto.Message{&rmspb.SetDefaultFirmwareObjectRequest{ObjectId: fuzzObjects.plain}}
	case rmspb.RackManager_ListFirmwareObjects_FullMethodName:
		return []proto.Message{&rmspb.ListFirmwareObjectsRequest{HardwareType: "any"}}
	case rmspb.RackManager_GetFirmwareObjectHistory_FullMethodName:
		return []proto.Message{&rmspb.GetFirmwareObjectHistoryRequest{ObjectId: fuzzObjects.gone, RackIds: []string{"rack-001"}}}
	case rmspb.RackManager_CompareFirmwareObject_FullMethodName:
		rack := fuzzRackNodes(0)
		return []proto.Message{&rmspb.CompareFirmwareObjectRequest{ConfigJson: smallManifest, Nodes: nodeSet(rack[16], rack[18], rack[30]),
			ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{int32(rmspb.NodeType_SWITCH_GB200_NVIDIA): {Components: []string{"cpld"}}}}}
	case rmspb.RackManager_UpdateFirmware_FullMethodName:
		return []proto.Message{
			&rmspb.UpdateFirmwareRequest{RackId: "rack-001", NodeId: "rack-001-compute-01", Filename: fuzzPackages[0], Target: "FW_BMC_0", Activate: true},
			&rmspb.UpdateFirmwareRequest{RackId: "rack-001", NodeId: "rack-001-switch-01", FirmwareTargets: []*rmspb.FirmwareTarget{
				{Target: "bmc", Filename: fuzzPackages[1]}, {Target: "cpld1", Filename: fuzzPackages[4]}}},
		}
	case rmspb.RackManager_BatchUpdateFirmwareByNodeType_FullMethodName:
		return []proto.Message{&rmspb.BatchUpdateFirmwareByNodeTypeRequest{RackId: "rack-001",
			NodeType: rmspb.NodeType_POWERSHELF_GB200_LITEON, Filename: fuzzPackages[2], Activate: true}}
	case rmspb.RackManager_BatchUpdateFirmware_FullMethodName:
		rack := fuzzRackNodes(0)
		return []proto.Message{&rmspb.BatchUpdateFirmwareRequest{Nodes: nodeSet(rack[0], rack[1], rack[18], rack[30]),
			FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
				int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Targets: []*rmspb.FirmwareTarget{{Target: "FW_BMC_0", Filename: fuzzPackages[3]}}}},
			NodeDescriptorFirmwareTargets: []*rmspb.NodeDescriptorFirmwareTargetList{{
				NodeDescriptor:  &rmspb.NodeDescriptor{Attributes: hw.SwitchGB200Nvidia.Descriptor()},
				FirmwareTargets: &rmspb.FirmwareTargetList{Targets: []*rmspb.FirmwareTarget{{Target: "bmc", Filename: fuzzPackages[1]}}}}}}}
	case rmspb.RackManager_ApplyStoredFirmwareObject_FullMethodName:
		rack := fuzzRackNodes(0)
		return []proto.Message{
			&rmspb.ApplyStoredFirmwareObjectRequest{ObjectId: fuzzObjects.ready, RackId: "rack-001", Nodes: nodeSet(rack[0], rack[18], rack[30])},
			&rmspb.ApplyStoredFirmwareObjectRequest{HardwareType: "any", Nodes: nodeSet(rack[2])},
			&rmspb.ApplyStoredFirmwareObjectRequest{ObjectId: fuzzObjects.ready, Nodes: nodeSet(rack[19], rack[19]),
				ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{int32(rmspb.NodeType_SWITCH_GB200_NVIDIA): {Components: []string{"bmc"}}}},
		}
	case rmspb.RackManager_ApplyFirmwareObject_FullMethodName:
		rack := fuzzRackNodes(0)
		return []proto.Message{&rmspb.ApplyFirmwareObjectRequest{ConfigJson: smallManifest, RackId: "rack-001", Nodes: nodeSet(rack[0], rack[18])}}
	case rmspb.RackManager_ListNodeDeviceInfoByNodeType_FullMethodName:
		return []proto.Message{&rmspb.ListNodeDeviceInfoByNodeTypeRequest{RackId: "rack-001", NodeType: rmspb.NodeType_SWITCH_GB200_NVIDIA}}
	}
	return nil
}

package rmsserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// The fuzz targets build one request per input (the fuzzer's bytes decoded
// as the request type of the RPC the first argument picks: proto.Unmarshal,
// repairing what the wire cannot carry, see decodeLeniently)
// and send it to a real server: a real job engine, node registry and node
// runner, whose nodes all "are" at a loopback port that refuses every
// connection. The property, for every implemented RPC: the
// handler does not panic, and answers either a gRPC status (INVALID_ARGUMENT
// or NOT_FOUND, ALREADY_EXISTS for a firmware object added twice and
// FAILED_PRECONDITION for one applied before it is available: nothing else
// is a caller's mistake) or a reply whose status is set and consistent with
// its stats, with bounded messages; a firmware batch answers one result
// per node it names, in order, and a job only for a node that succeeded.
// Every job a fuzzed request starts is cancelled and waited for before the
// next input (see settle). The firmware catalog's
// downloads never leave the process: its downloader refuses every transfer
// (see fuzzCatalog).
//
// The seed corpus is the requests the tests send (testdata/fuzz/*/seed-*,
// see fuzzseeds_test.go); inputs the fuzzer found failing are committed
// beside them and run as regression tests in every `go test`. Run one
// target with e.g.
//
//	go test -run '^$' -fuzz '^FuzzPower$' -fuzztime 1m ./grpc/rmsserver

func FuzzRegistration(f *testing.F)      { fuzzTarget(f, "FuzzRegistration") }
func FuzzPower(f *testing.F)             { fuzzTarget(f, "FuzzPower") }
func FuzzDeviceInfo(f *testing.F)        { fuzzTarget(f, "FuzzDeviceInfo") }
func FuzzColdReboot(f *testing.F)        { fuzzTarget(f, "FuzzColdReboot") }
func FuzzJobStatus(f *testing.F)         { fuzzTarget(f, "FuzzJobStatus") }
func FuzzFirmwareInventory(f *testing.F) { fuzzTarget(f, "FuzzFirmwareInventory") }
func FuzzFirmwareCatalog(f *testing.F)   { fuzzTarget(f, "FuzzFirmwareCatalog") }
func FuzzFirmwareUpdate(f *testing.F)    { fuzzTarget(f, "FuzzFirmwareUpdate") }

// fuzzRPC is one RPC a fuzz target drives.
type fuzzRPC struct {
	method string
	newReq func() proto.Message
	// call sends req, through the gRPC client unless the family is direct.
	call func(ctx context.Context, to fuzzCallee, req proto.Message) (proto.Message, error)
}

// fuzzCallee is where a fuzzed request goes: the gRPC client of the
// fixture's server, or (direct families) a rackManager of its own.
type fuzzCallee struct {
	client rmspb.RackManagerClient
	// v2 is the RackManagerV2 client of the fixture's server (see rpcV2).
	v2     rmspbv2.RackManagerV2Client
	direct *rackManager
}

// fuzzFamily is the RPCs of one fuzz target.
type fuzzFamily struct {
	target string
	// direct families call the handler methods on a fresh rackManager with
	// a fresh registry per input (registration state would otherwise grow
	// without bound over a fuzzing run); the others go through gRPC.
	direct bool
	rpcs   []fuzzRPC
}

// rpc builds a fuzzRPC from an empty request, the client method and the
// handler method.
func rpc[Req, Resp proto.Message](method string, empty Req,
	viaClient func(rmspb.RackManagerClient, context.Context, Req, ...grpc.CallOption) (Resp, error),
	viaHandler func(*rackManager, context.Context, Req) (Resp, error)) fuzzRPC {
	return fuzzRPC{
		method: method,
		newReq: func() proto.Message { return empty.ProtoReflect().New().Interface() },
		call: func(ctx context.Context, to fuzzCallee, req proto.Message) (proto.Message, error) {
			var (
				resp Resp
				err  error
			)
			if to.direct != nil {
				resp, err = viaHandler(to.direct, ctx, req.(Req))
			} else {
				resp, err = viaClient(to.client, ctx, req.(Req))
			}
			if err != nil {
				return nil, err
			}
			return resp, nil
		},
	}
}

var fuzzFamilies = []fuzzFamily{
	{target: "FuzzRegistration", direct: true, rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_CreateNodes_FullMethodName, &rmspb.CreateNodesRequest{},
			rmspb.RackManagerClient.CreateNodes, (*rackManager).CreateNodes),
		rpc(rmspb.RackManager_UpdateNode_FullMethodName, &rmspb.UpdateNodeRequest{},
			rmspb.RackManagerClient.UpdateNode, (*rackManager).UpdateNode),
		rpc(rmspb.RackManager_DeleteNode_FullMethodName, &rmspb.DeleteNodeRequest{},
			rmspb.RackManagerClient.DeleteNode, (*rackManager).DeleteNode),
		rpc(rmspb.RackManager_ListRacks_FullMethodName, &rmspb.ListRacksRequest{},
			rmspb.RackManagerClient.ListRacks, (*rackManager).ListRacks),
		rpc(rmspb.RackManager_ListNodeInventory_FullMethodName, &rmspb.ListNodeInventoryRequest{},
			rmspb.RackManagerClient.ListNodeInventory, (*rackManager).ListNodeInventory),
		// The utility RPC rides along: it takes an (empty) request too.
		rpc(rmspb.RackManager_GetVersion_FullMethodName, &rmspb.GetVersionRequest{},
			rmspb.RackManagerClient.GetVersion, (*rackManager).GetVersion),
	}},
	{target: "FuzzPower", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_SetPowerState_FullMethodName, &rmspb.SetPowerStateRequest{},
			rmspb.RackManagerClient.SetPowerState, (*rackManager).SetPowerState),
		rpc(rmspb.RackManager_GetPowerState_FullMethodName, &rmspb.GetPowerStateRequest{},
			rmspb.RackManagerClient.GetPowerState, (*rackManager).GetPowerState),
		rpc(rmspb.RackManager_BatchSetPowerState_FullMethodName, &rmspb.BatchSetPowerStateRequest{},
			rmspb.RackManagerClient.BatchSetPowerState, (*rackManager).BatchSetPowerState),
		rpc(rmspb.RackManager_BatchGetPowerState_FullMethodName, &rmspb.BatchGetPowerStateRequest{},
			rmspb.RackManagerClient.BatchGetPowerState, (*rackManager).BatchGetPowerState),
	}},
	{target: "FuzzDeviceInfo", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_GetNodeDeviceInfo_FullMethodName, &rmspb.GetNodeDeviceInfoRequest{},
			rmspb.RackManagerClient.GetNodeDeviceInfo, (*rackManager).GetNodeDeviceInfo),
		rpc(rmspb.RackManager_ListNodeDeviceInfoByNodeType_FullMethodName,
			&rmspb.ListNodeDeviceInfoByNodeTypeRequest{},
			rmspb.RackManagerClient.ListNodeDeviceInfoByNodeType, (*rackManager).ListNodeDeviceInfoByNodeType),
		rpc(rmspb.RackManager_BatchGetNodeDeviceInfo_FullMethodName,
			&rmspb.BatchGetNodeDeviceInfoRequest{},
			rmspb.RackManagerClient.BatchGetNodeDeviceInfo, (*rackManager).BatchGetNodeDeviceInfo),
	}},
	{target: "FuzzFirmwareInventory", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_GetNodeFirmwareInventory_FullMethodName, &rmspb.GetNodeFirmwareInventoryRequest{},
			rmspb.RackManagerClient.GetNodeFirmwareInventory, (*rackManager).GetNodeFirmwareInventory),
		rpc(rmspb.RackManager_BatchGetFirmwareInventory_FullMethodName, &rmspb.BatchGetFirmwareInventoryRequest{},
			rmspb.RackManagerClient.BatchGetFirmwareInventory, (*rackManager).BatchGetFirmwareInventory),
		rpc(rmspb.RackManager_GetRackFirmwareInventory_FullMethodName, &rmspb.GetRackFirmwareInventoryRequest{},
			rmspb.RackManagerClient.GetRackFirmwareInventory, (*rackManager).GetRackFirmwareInventory),
		// Last, so that the recorded seeds of the others keep their index.
		rpc(rmspb.RackManager_CompareFirmwareObject_FullMethodName, &rmspb.CompareFirmwareObjectRequest{},
			rmspb.RackManagerClient.CompareFirmwareObject, (*rackManager).CompareFirmwareObject),
	}},
	{target: "FuzzFirmwareCatalog", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_AddFirmwareObject_FullMethodName, &rmspb.AddFirmwareObjectRequest{},
			rmspb.RackManagerClient.AddFirmwareObject, (*rackManager).AddFirmwareObject),
		rpc(rmspb.RackManager_GetFirmwareObject_FullMethodName, &rmspb.GetFirmwareObjectRequest{},
			rmspb.RackManagerClient.GetFirmwareObject, (*rackManager).GetFirmwareObject),
		rpc(rmspb.RackManager_ListFirmwareObjects_FullMethodName, &rmspb.ListFirmwareObjectsRequest{},
			rmspb.RackManagerClient.ListFirmwareObjects, (*rackManager).ListFirmwareObjects),
		rpc(rmspb.RackManager_DeleteFirmwareObject_FullMethodName, &rmspb.DeleteFirmwareObjectRequest{},
			rmspb.RackManagerClient.DeleteFirmwareObject, (*rackManager).DeleteFirmwareObject),
		rpc(rmspb.RackManager_SetDefaultFirmwareObject_FullMethodName, &rmspb.SetDefaultFirmwareObjectRequest{},
			rmspb.RackManagerClient.SetDefaultFirmwareObject, (*rackManager).SetDefaultFirmwareObject),
		rpc(rmspb.RackManager_GetFirmwareObjectHistory_FullMethodName, &rmspb.GetFirmwareObjectHistoryRequest{},
			rmspb.RackManagerClient.GetFirmwareObjectHistory, (*rackManager).GetFirmwareObjectHistory),
	}},
	// The firmware updates start jobs (on the fixture's rack, its firmware_dir
	// and its one available catalog object); settle ends them.
	{target: "FuzzFirmwareUpdate", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_UpdateFirmware_FullMethodName, &rmspb.UpdateFirmwareRequest{},
			rmspb.RackManagerClient.UpdateFirmware, (*rackManager).UpdateFirmware),
		rpc(rmspb.RackManager_BatchUpdateFirmwareByNodeType_FullMethodName, &rmspb.BatchUpdateFirmwareByNodeTypeRequest{},
			rmspb.RackManagerClient.BatchUpdateFirmwareByNodeType, (*rackManager).BatchUpdateFirmwareByNodeType),
		rpc(rmspb.RackManager_BatchUpdateFirmware_FullMethodName, &rmspb.BatchUpdateFirmwareRequest{},
			rmspb.RackManagerClient.BatchUpdateFirmware, (*rackManager).BatchUpdateFirmware),
		rpc(rmspb.RackManager_ApplyStoredFirmwareObject_FullMethodName, &rmspb.ApplyStoredFirmwareObjectRequest{},
			rmspb.RackManagerClient.ApplyStoredFirmwareObject, (*rackManager).ApplyStoredFirmwareObject),
		rpc(rmspb.RackManager_ApplyFirmwareObject_FullMethodName, &rmspb.ApplyFirmwareObjectRequest{},
			rmspb.RackManagerClient.ApplyFirmwareObject, (*rackManager).ApplyFirmwareObject),
	}},
	{target: "FuzzColdReboot", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_ExecuteColdReboot_FullMethodName, &rmspb.ExecuteColdRebootRequest{},
			rmspb.RackManagerClient.ExecuteColdReboot, (*rackManager).ExecuteColdReboot),
	}},
	{target: "FuzzJobStatus", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_GetJobStatus_FullMethodName, &rmspb.GetJobStatusRequest{},
			rmspb.RackManagerClient.GetJobStatus, (*rackManager).GetJobStatus),
		rpc(rmspb.RackManager_GetFirmwareJobStatus_FullMethodName, &rmspb.GetFirmwareJobStatusRequest{},
			rmspb.RackManagerClient.GetFirmwareJobStatus, (*rackManager).GetFirmwareJobStatus),
		rpc(rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName,
			&rmspb.GetSwitchSystemImageJobStatusRequest{},
			rmspb.RackManagerClient.GetSwitchSystemImageJobStatus, (*rackManager).GetSwitchSystemImageJobStatus),
		rpc(rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName,
			&rmspb.GetConfigureSwitchCertificateJobStatusRequest{},
			rmspb.RackManagerClient.GetConfigureSwitchCertificateJobStatus, (*rackManager).GetConfigureSwitchCertificateJobStatus),
	}},
}

// fuzzTargetOf says which fuzz target drives method, and its index there.
func fuzzTargetOf(method string) (string, int, bool) {
	for _, f := range fuzzFamilies {
		for i, r := range f.rpcs {
			if r.method == method {
				return f.target, i, true
			}
		}
	}
	return "", 0, false
}

func familyOf(target string) fuzzFamily {
	for _, f := range fuzzFamilies {
		if f.target == target {
			return f
		}
	}
	panic("no fuzz family " + target)
}

// fuzzCallTimeout bounds one fuzzed call: every node is at the sink, so a
// handler that takes this long is stuck.
const fuzzCallTimeout = 30 * time.Second

func fuzzTarget(f *testing.F, target string) {
	fam := familyOf(target)
	for i, r := range fam.rpcs {
		f.Add(uint8(i), []byte{}) // the empty request of every RPC
		for _, seed := range fixtureSeeds(r.method) {
			data, err := proto.Marshal(seed)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), data)
		}
	}
	fx := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		r := fam.rpcs[int(pick)%len(fam.rpcs)]
		req := r.newReq()
		decodeLeniently(data, req)
		to := fuzzCallee{client: fx.client, v2: fx.v2}
		if fam.direct {
			to = fuzzCallee{direct: fx.freshManager(t)}
		} else {
			fx.pointAtSink(req)
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzCallTimeout)
		defer cancel()
		reply, err := r.call(ctx, to, req)
		problem := answerProblem(r.method, reply, err)
		if problem == "" && err == nil {
			problem = echoProblem(req, reply)
		}
		if problem != "" {
			t.Fatalf("%s(%s): %s", r.method, clip(fmt.Sprint(req), 2000), problem)
		}
		fx.settle(t, reply)
	})
}

// Every implemented RPC is driven by exactly one fuzz target, and no
// target names an RPC that is pending or unknown.
func TestEveryImplementedRPCIsFuzzed(t *testing.T) {
	known := map[string]bool{}
	for _, svc := range []protoreflect.ServiceDescriptor{
		rmspb.File_rack_manager_rack_manager_proto.Services().ByName("RackManager"),
		rmspbv2.File_rack_manager_v2_rack_manager_v2_proto.Services().ByName("RackManagerV2"),
	} {
		methods := svc.Methods()
		for i := 0; i < methods.Len(); i++ {
			name := "/" + string(svc.FullName()) + "/" + string(methods.Get(i).Name())
			known[name] = true
			if pendingRPCs[name] {
				continue
			}
			if _, _, ok := fuzzTargetOf(name); !ok {
				t.Errorf("%s is implemented but no fuzz target drives it", name)
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range fuzzFamilies {
		for _, r := range f.rpcs {
			switch {
			case !known[r.method] || pendingRPCs[r.method]:
				t.Errorf("%s drives %s, which is not an implemented RPC", f.target, r.method)
			case seen[r.method]:
				t.Errorf("%s is driven twice", r.method)
			case !strings.HasPrefix(r.method, "/rack_manager.RackManager/") && !strings.HasPrefix(r.method, "/rack_manager_v2.RackManagerV2/"):
				t.Errorf("%s: not a RackManager or RackManagerV2 method", r.method)
			}
			seen[r.method] = true
		}
	}
}

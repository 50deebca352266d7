package rmsserver

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fabricsync"
)

// FuzzFabricReconcile drives RackManagerV2.ConfigureScaleUpFabricManager.
// Its jobs run against fabric clients that fail every call, as the sink
// refuses every connection; settle cancels and waits for them.
func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzFabricReconcile", rpcs: []fuzzRPC{
		rpcV2(rmspbv2.RackManagerV2_ConfigureScaleUpFabricManager_FullMethodName, &rmspbv2.ConfigureScaleUpFabricManagerRequest{},
			rmspbv2.RackManagerV2Client.ConfigureScaleUpFabricManager),
	}})
	moreReplyProblems = append(moreReplyProblems, fabricReconcileProblem)
}

func FuzzFabricReconcile(f *testing.F) {
	rack := fuzzRackNodes(0)
	switches, compute := nodeSet(rack[18:27]...), nodeSet(rack[:18]...)
	primary := "rack-001-switch-03"
	cfg := &rmspbv2.ScaleUpFabricConfig{TopologyType: "gb200_nvl72r1_c2g4_topology",
		ExtraStaticConfigs: []*rmspb.ScaleUpFabricStaticConfig{{ConfigFileName: "fm_config", Key: "FM_TIMEOUT", Value: "60"}}}
	full := &rmspbv2.ScaleUpFabricLayout{Fabrics: []*rmspbv2.ScaleUpFabricSpec{{ComputeTrayCount: 18, SwitchTrayCount: 9}}}
	for i, seed := range []proto.Message{
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: cfg},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: cfg, PrimarySwitchNodeId: &primary},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: cfg, Layout: full, ComputeNodes: compute},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t",
			ExtraStaticConfigs: []*rmspb.ScaleUpFabricStaticConfig{{ConfigFileName: "a", Key: "b"}, {ConfigFileName: "a", Key: "b"}}}},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	fuzzTarget(f, "FuzzFabricReconcile")
}

// rpcV2 builds a fuzzRPC of a RackManagerV2 method, sent through the
// fixture's V2 client.
func rpcV2[Req, Resp proto.Message](method string, empty Req,
	viaClient func(rmspbv2.RackManagerV2Client, context.Context, Req, ...grpc.CallOption) (Resp, error)) fuzzRPC {
	return fuzzRPC{
		method: method,
		newReq: func() proto.Message { return empty.ProtoReflect().New().Interface() },
		call: func(ctx context.Context, to fuzzCallee, req proto.Message) (proto.Message, error) {
			resp, err := viaClient(to.v2, ctx, req.(Req))
			if err != nil {
				return nil, err
			}
			return resp, nil
		},
	}
}

// fabricReconcileProblem: an admitted reconcile names its job, and a
// layout's selection names switches and a primary among them.
func fabricReconcileProblem(reply proto.Message) (string, bool) {
	r, ok := reply.(*rmspbv2.ConfigureScaleUpFabricManagerResponse)
	if !ok {
		return "", false
	}
	if r.GetJobId() == "" {
		return "no job_id", true
	}
	for i, sel := range r.GetSelectedFabrics() {
		found := false
		for _, id := range sel.GetSwitchNodeIds() {
			found = found || id == sel.GetPrimarySwitchNodeId()
		}
		if !found {
			return fmt.Sprintf("selected fabric %d: primary %q is not among its switches", i, clip(sel.GetPrimarySwitchNodeId(), 100)), true
		}
	}
	return "", true
}

// fuzzFabricSwitch is the fuzz fixture's fabric client: every node is at
// the sink, so every call fails as a refused connection would.
func fuzzFabricSwitch(n hw.Node, _ string) (fabricsync.Switch, error) {
	return sinkFabric{id: n.ID}, nil
}

type sinkFabric struct{ id string }

func (s sinkFabric) err(step string) error {
	return fmt.Errorf("switch %s: %s: connection refused", s.id, step)
}

func (s sinkFabric) Cluster(context.Context) (fabric.ClusterState, error) {
	return fabric.ClusterState{}, s.err("cluster")
}
func (s sinkFabric) SetCluster(context.Context, bool) (fabric.ClusterState, error) {
	return fabric.ClusterState{}, s.err("set cluster")
}
func (s sinkFabric) App(context.Context, string) (fabric.AppStatus, error) {
	return fabric.AppStatus{}, s.err("app")
}
func (s sinkFabric) SetAppManager(context.Context, string, bool) error { return s.err("app manager") }
func (s sinkFabric) RestartApp(context.Context, string) error          { return s.err("restart app") }
func (s sinkFabric) NodeIPs(context.Context) (fabric.NodeIPs, error) {
	return fabric.NodeIPs{}, s.err("node IPs")
}
func (s sinkFabric) SetNodeIPs(context.Context, fabric.NodeIPs) error { return s.err("set node IPs") }
func (s sinkFabric) Hello(context.Context) error                      { return s.err("hello") }
func (s sinkFabric) StaticConfig(context.Context, []fabric.ConfigKey) ([]fabric.ConfigEntry, error) {
	return nil, s.err("static config")
}
func (s sinkFabric) SetStaticConfig(context.Context, []fabric.ConfigEntry) error {
	return s.err("set static config")
}
func (s sinkFabric) WaitConfigured(context.Context) (fabric.AppStatus, error) {
	return fabric.AppStatus{}, s.err("wait configured")
}
func (s sinkFabric) NMXMTLS(context.Context) (fabric.MTLSBinding, error) {
	return fabric.MTLSBinding{}, s.err("mtls")
}
func (s sinkFabric) SetNMXMTLS(context.Context, fabric.MTLSBinding) error { return s.err("set mtls") }

package rmsserver

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// FuzzFabricReconcile drives RackManagerV2.ConfigureScaleUpFabricManager.
// Its jobs run the fixture's fabric clients against the refusing sink;
// settle cancels and waits for them.
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
		// What v1 refuses as a topology, and bad static configs.
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "$(reboot);`id`"}},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "../../x"}},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: strings.Repeat("t", 129)}},
		&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: switches, Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t",
			ExtraStaticConfigs: []*rmspb.ScaleUpFabricStaticConfig{{ConfigFileName: "../fm_config", Key: "K\n", Value: "1\n2"}}}},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	fuzzTarget(f, "FuzzFabricReconcile")
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

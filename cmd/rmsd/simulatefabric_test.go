package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
)

// Under --simulate, [switches] nmx_port and gnmi_port are the simulated
// NVOS hosts' NMX-C and gNMI ports and the fabric's waits are paced: a
// switch sent with host port 0 is brought up as a fabric manager, its
// telemetry interface enabled, and its fabric inspected, by the daemon's
// own wiring.
func TestSimulateBringsUpTheScaleUpFabric(t *testing.T) {
	cfg := simulateConfig(t, 96, 0, filepath.Join(t.TempDir(), "nodes.json"))
	d, client := startSimulated(t, cfg)

	var switches, computes []*rmspb.NodeInfo
	for _, n := range d.fleet.Nodes() {
		node := hw.Node{ID: n.ID, RackID: n.RackID, Type: n.Type}
		bmc := n.BMC
		node.BMC = &bmc
		if n.Switch != nil {
			host := n.Host
			node.Host = &host
			ni := rmsserver.NodeInfoToProto(node)
			ni.HostEndpoint.Port = 0
			switches = append(switches, ni)
		} else if n.Type.Kind() == hw.KindCompute {
			computes = append(computes, rmsserver.NodeInfoToProto(node))
		}
	}
	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rpcCancel()
	conf, err := client.ConfigureScaleUpFabricManager(rpcCtx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: switches[0], TopologyType: "gb200_nvl72r1_c2g4_topology"})
	if err != nil || conf.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !conf.GetGrpcEnabled() {
		t.Fatalf("ConfigureScaleUpFabricManager = %v, %v", conf, err)
	}
	tel, err := client.SetScaleUpFabricTelemetryInterfaceState(rpcCtx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: switches[0], Enable: true})
	var res struct {
		GNMIVersion string `json:"gnmi_version"`
	}
	if err != nil || tel.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || json.Unmarshal([]byte(tel.GetResultJson()), &res) != nil || res.GNMIVersion == "" {
		t.Fatalf("SetScaleUpFabricTelemetryInterfaceState = %v, %v", tel, err)
	}
	// The controller converges within the simulated convergence time; the
	// inspection reports it CONFIGURED once it has.
	var insp *rmspb.InspectScaleUpFabricsResponse
	pollUntil(t, rpcCtx, "a NORMAL fabric", func() bool {
		insp, err = client.InspectScaleUpFabrics(rpcCtx, &rmspb.InspectScaleUpFabricsRequest{Nodes: &rmspb.NodeSet{Nodes: switches},
			ComputeNodes: &rmspb.NodeSet{Nodes: computes}})
		if err != nil {
			t.Fatal(err)
		}
		return len(insp.GetFabrics()) == 1 && insp.GetFabrics()[0].GetStatus() == rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_NORMAL
	})
	if insp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(insp.GetFabrics()[0].GetComputeNodeIds()) != len(computes) {
		t.Fatalf("InspectScaleUpFabrics = %v", insp)
	}
}

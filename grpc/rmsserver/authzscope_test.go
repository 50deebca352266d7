package rmsserver

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
)

// TestRequestScope: the racks each shape of request reaches.
func TestRequestScope(t *testing.T) {
	reg := racks.New(nil)
	for _, err := range reg.Create([]hw.Node{
		{ID: "c1", RackID: "r1", Type: hw.ComputeGB200Nvidia, BMC: &hw.Endpoint{IP: "10.0.0.1", Credentials: hw.UserPass("a", "b")}},
		{ID: "s1", RackID: "r2", Type: hw.SwitchGB200Nvidia, BMC: &hw.Endpoint{IP: "10.0.0.2", Credentials: hw.UserPass("a", "b")}},
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	info := func(rack, node string) *rmspb.NodeInfo { return &rmspb.NodeInfo{RackId: rack, NodeId: node} }
	set := func(n ...*rmspb.NodeInfo) *rmspb.NodeSet { return &rmspb.NodeSet{Nodes: n} }
	for _, tt := range []struct {
		name string
		req  proto.Message
		want authz.Scope
	}{
		{"rack and node", &rmspb.SetPowerStateRequest{RackId: "r9", NodeId: "c1"}, authz.Scope{Racks: []string{"r9"}}},
		{"node placed by the registry", &rmspb.GetPowerStateRequest{NodeId: "c1"}, authz.Scope{Racks: []string{"r1"}}},
		{"unknown node", &rmspb.GetPowerStateRequest{NodeId: "zz"}, authz.Scope{SiteWide: true}},
		{"rack only", &rmspb.GetRackFirmwareInventoryRequest{RackId: "r3"}, authz.Scope{Racks: []string{"r3"}}},
		{"node set", &rmspb.CompareFirmwareObjectRequest{Nodes: set(info("r2", "x"), info("r1", "y"), info("r2", "z"))}, authz.Scope{Racks: []string{"r1", "r2"}}},
		{"node set without racks", &rmspb.BatchGetPowerStateRequest{Nodes: set(info("", "c1"), info("", "s1"))}, authz.Scope{Racks: []string{"r1", "r2"}}},
		{"compute nodes too", &rmspb.InspectScaleUpFabricsRequest{Nodes: set(info("r1", "s")), ComputeNodes: set(info("r5", "c"))}, authz.Scope{Racks: []string{"r1", "r5"}}},
		{"targets", &rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{Targets: []*rmspb.NodeInfo{info("r7", "s")}}, authz.Scope{Racks: []string{"r7"}}},
		{"one node field", &rmspb.GetScaleUpFabricStateRequest{Node: info("r8", "s")}, authz.Scope{Racks: []string{"r8"}}},
		{"v2 nodes", &rmspbv2.StartSystemValidationRequest{Nodes: set(info("r4", "c"))}, authz.Scope{Racks: []string{"r4"}}},
		{"rack ids", &rmspb.GetFirmwareObjectHistoryRequest{RackIds: []string{"r2", "r1"}}, authz.Scope{Racks: []string{"r1", "r2"}}},
		{"history of every rack", &rmspb.GetFirmwareObjectHistoryRequest{}, authz.Scope{SiteWide: true}},
		{"site-wide", &rmspb.ListRacksRequest{}, authz.Scope{SiteWide: true}},
		{"empty set", &rmspb.BatchSetPowerStateRequest{}, authz.Scope{SiteWide: true}},
		{"rack of a by-type batch", &rmspb.BatchUpdateFirmwareByNodeTypeRequest{RackId: "r6"}, authz.Scope{Racks: []string{"r6"}}},
	} {
		got, err := requestScope(context.Background(), Deps{Racks: reg}, tt.req)
		if err != nil || !slices.Equal(got.Racks, tt.want.Racks) || got.SiteWide != tt.want.SiteWide {
			t.Errorf("%s: got %+v %v, want %+v", tt.name, got, err, tt.want)
		}
	}
}

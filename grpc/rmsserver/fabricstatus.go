package rmsserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
)

// GetScaleUpFabricStatus follows upstream's handle_get_scale_up_fabric_status
// and read_scale_up_fabric_status: every switch's cluster state and the
// status string of its nmx-controller app ("ok", "not ok", "stopped"; empty
// when the app could not be read, best effort), each switch's read error in
// its own entry; then, when exactly one switch is enabled (the observed
// primary), the topology from its NMX-C. Several enabled switches are drift
// with no authoritative controller: FAILURE naming them. No switch read at
// all is FAILURE ("failed to inspect any requested switch"). A failure keeps
// the switches read so far in fabric_status. extra_static_configs holds
// entries of the files a request names only; this request names none, so it
// is empty (the v2 reconciliation reads back the files its config names).
// Nothing is changed.
func (m *rackManager) GetScaleUpFabricStatus(ctx context.Context, req *rmspb.GetScaleUpFabricStatusRequest) (*rmspb.GetScaleUpFabricStatusResponse, error) {
	resp := &rmspb.GetScaleUpFabricStatusResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	nodes, refusal, err := m.fabricNodes(req.GetNodes(), req.GetDomain(), false)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		resp.ErrorMessage = refusal
		return resp, nil
	}
	switches := make([]*rmspb.ScaleUpFabricSwitchStatus, len(nodes))
	for i, n := range nodes {
		switches[i] = &rmspb.ScaleUpFabricSwitchStatus{NodeId: n.ID}
	}
	results := m.eachNode(ctx, nodes, fabricCheck, m.fabricOp(nodes, func(ctx context.Context, i int, sw *fabric.Switch) error {
		cl, err := sw.Cluster(ctx)
		if err != nil {
			return err
		}
		// upstream's cluster_state_is_enabled: NVUE reports an active
		// cluster as enabled or start.
		switches[i].Enabled = cl.State == "enabled" || cl.State == "start"
		if app, err := sw.App(ctx, fabric.AppController); err == nil {
			switches[i].FabricManagerStatus = clip(app.Status, maxEchoed)
		}
		return nil
	}))
	read := 0
	var enabled []int
	for i, r := range results {
		if r.err != nil {
			switches[i].ErrorMessage = clip(r.err.Error(), maxNodeError)
			continue
		}
		read++
		if switches[i].Enabled {
			enabled = append(enabled, i)
		}
	}
	status := &rmspb.ScaleUpFabricStatus{Switches: switches}
	fail := func(msg string) (*rmspb.GetScaleUpFabricStatusResponse, error) {
		resp.ErrorMessage, resp.FabricStatus = clip(msg, maxMessage), status
		return resp, nil
	}
	if len(enabled) > 1 {
		ids := make([]string, len(enabled))
		for j, i := range enabled {
			ids[j] = hw.QuoteShort(nodes[i].ID)
		}
		return fail("multiple switches report scale-up fabric enabled: " + strings.Join(ids, ", "))
	}
	if len(enabled) == 1 {
		primary := enabled[0]
		topology, err := m.fabricTopology(ctx, nodes[primary])
		if err != nil {
			return fail(fmt.Sprintf("read the NMX-C config of %s: %v", nodes[primary].ID, err))
		}
		status.TopologyType = clip(topology, maxEchoed)
	}
	if read == 0 {
		return fail("failed to inspect any requested switch")
	}
	resp.Status, resp.FabricStatus = rmspb.ReturnCode_RETURN_CODE_SUCCESS, status
	return resp, nil
}

// fabricTopology reads the topology (fm_config MNNVL_TOPOLOGY) from the
// NMX-C of switch n; a controller that does not report it has none ("").
func (m *rackManager) fabricTopology(ctx context.Context, n hw.Node) (string, error) {
	var topology string
	err := m.deps.Nodes.One(ctx, n, m.fabricOp([]hw.Node{n}, func(ctx context.Context, _ int, sw *fabric.Switch) error {
		got, err := sw.StaticConfig(ctx, []fabric.ConfigKey{{File: fabric.FileFM, Key: fabric.KeyTopology}})
		for _, e := range got {
			topology = e.Value
		}
		return err
	}))
	return topology, err
}

package rmsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/platform"
)

// The v1 scale-up fabric RPCs (rms-spec §2.7): synchronous, each call
// builds request-local fabric clients (hw/fabric) from the caller's
// NodeInfo. The RPCs that change a switch lease it from the job engine for
// the call, so no job runs on it meanwhile; the reads take no lease. A
// malformed id or node type is a gRPC INVALID_ARGUMENT; every other refusal
// (no node, a node that is not a switch or has no host endpoint, a bad
// topology, a busy switch) and every switch failure is in-band, except
// where the reply has no message to carry it (no node given to
// BatchGetScaleUpFabricServiceStatus is INVALID_ARGUMENT).

// fabricCheck refuses, without I/O, a node that is not a switch or has no
// host endpoint.
func fabricCheck(n hw.Node) error {
	if n.Type.Kind() != hw.KindSwitch {
		return fmt.Errorf("the scale-up fabric runs on switch trays only, not %s nodes: %w", n.Type.Name(), hw.ErrUnsupported)
	}
	if n.Host == nil || n.Host.Host() == "" {
		return errors.New("host_endpoint is required for the scale-up fabric")
	}
	return nil
}

// fabricOp runs f with the fabric client of node i of a batch.
func (m *rackManager) fabricOp(nodes []hw.Node, f func(ctx context.Context, i int, sw *fabric.Switch) error) func(ctx context.Context, i int, _ platform.Device) error {
	return func(ctx context.Context, i int, _ platform.Device) error {
		sw, err := fabric.New(nodes[i].ID, *nodes[i].Host, *m.deps.Fabric)
		if err != nil {
			return err
		}
		defer sw.Close()
		return f(ctx, i, sw)
	}
}

// fabricNodes decodes the nodes of a fabric batch; a request without nodes
// is answered with refusal, a malformed one with err.
func (m *rackManager) fabricNodes(set *rmspb.NodeSet, domain string, lease bool) (nodes []hw.Node, refusal string, err error) {
	if len(set.GetNodes()) == 0 {
		return nil, noNodesMessage, nil
	}
	if err := checkIDs(idField{"domain", domain}); err != nil {
		return nil, "", err
	}
	if nodes, err = m.deps.nodesFromProto(set); err != nil {
		return nil, "", err
	}
	if m.deps.Fabric == nil || m.deps.Nodes == nil || (lease && m.deps.Jobs == nil) {
		return nil, "", errUnavailable("the scale-up fabric")
	}
	return nodes, "", nil
}

// fabricNode decodes the node of a single-switch fabric RPC and checks it
// without I/O: refusal says why it is not a usable switch.
func (m *rackManager) fabricNode(ni *rmspb.NodeInfo, lease bool) (n hw.Node, refusal string, err error) {
	if ni == nil {
		return hw.Node{}, "node is required", nil
	}
	if err := checkIDs(idField{"node.node_id", ni.GetNodeId()}, idField{"node.rack_id", ni.GetRackId()}); err != nil {
		return hw.Node{}, "", err
	}
	if n, err = nodeFromProto(ni); err != nil {
		return hw.Node{}, "", err
	}
	if m.deps.Fabric == nil || m.deps.Nodes == nil || (lease && m.deps.Jobs == nil) {
		return hw.Node{}, "", errUnavailable("the scale-up fabric")
	}
	results, run := admitNodes([]hw.Node{n}, fabricCheck)
	if len(run) == 0 {
		return n, results[0].err.Error(), nil
	}
	return n, "", nil
}

// onFabricSwitch runs f on one checked switch, leased for operation when
// lease is set; a refused lease is f's error.
func (m *rackManager) onFabricSwitch(ctx context.Context, operation string, n hw.Node, lease bool, f func(ctx context.Context, sw *fabric.Switch) error) error {
	if lease {
		l, err := m.lease(ctx, operation, nil, []hw.Node{n}, false)
		if err != nil {
			return err
		}
		defer l.release()
		ctx = l.ctx // the operation ends before its lease could lapse
		if l.err != nil {
			return l.err
		}
		if l.refused[0] != nil {
			return l.refused[0]
		}
	}
	return m.deps.Nodes.One(ctx, n, m.fabricOp([]hw.Node{n}, func(ctx context.Context, _ int, sw *fabric.Switch) error {
		return f(ctx, sw)
	}))
}

// ConfigureScaleUpFabricManager brings the scale-up fabric manager up on
// one switch: cluster enabled, external gRPC access to NMX-C enabled, the
// controller running, NMX-C Hello, and the topology set (fm_config
// MNNVL_TOPOLOGY, read back). A switch that already has all of it is only
// checked.
func (m *rackManager) ConfigureScaleUpFabricManager(ctx context.Context, req *rmspb.ConfigureScaleUpFabricManagerRequest) (*rmspb.ConfigureScaleUpFabricManagerResponse, error) {
	resp := &rmspb.ConfigureScaleUpFabricManagerResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	if err := checkIDs(idField{"domain", req.GetDomain()}); err != nil {
		return nil, err
	}
	n, refusal, err := m.fabricNode(req.GetNode(), true)
	if err != nil {
		return nil, err
	}
	if refusal == "" {
		refusal = topologyProblem("topology_type", req.GetTopologyType())
	}
	if refusal != "" {
		resp.Message = clip(refusal, maxMessage)
		return resp, nil
	}
	topology := req.GetTopologyType()
	var already bool
	err = m.onFabricSwitch(ctx, "ConfigureScaleUpFabricManager", n, true, func(ctx context.Context, sw *fabric.Switch) error {
		var err error
		already, err = bringUpFabric(ctx, sw, topology, resp)
		return err
	})
	if err != nil {
		resp.Message = clip(fmt.Sprintf("Scale-up fabric manager configuration of %s failed: %v", n.ID, err), maxMessage)
		m.failed(ctx, n.RackID, n.ID, err)
		return resp, nil
	}
	resp.Status, resp.TopologyUsed = rmspb.ReturnCode_RETURN_CODE_SUCCESS, topology
	resp.Message = fmt.Sprintf("Scale-up fabric manager configured on %s with topology %s", n.ID, topology)
	if already {
		resp.Message = fmt.Sprintf("Scale-up fabric manager already configured on %s with topology %s", n.ID, topology)
	}
	return resp, nil
}

// bringUpFabric runs the v1 bring-up on sw and records in resp what is on
// as it goes; already reports the short-circuit (nothing changed). The app
// is re-read and NMX-C greeted again only after turning something on.
func bringUpFabric(ctx context.Context, sw *fabric.Switch, topology string, resp *rmspb.ConfigureScaleUpFabricManagerResponse) (already bool, err error) {
	topoKey := fabric.ConfigKey{File: fabric.FileFM, Key: fabric.KeyTopology}
	cl, err := sw.Cluster(ctx)
	if err != nil {
		return false, err
	}
	resp.ScaleUpFabricStateEnabled = cl.Enabled()
	app, err := sw.App(ctx, fabric.AppController)
	if err != nil {
		return false, err
	}
	resp.GrpcEnabled = cl.Enabled() && app.Installed && app.ManagerEnabled()
	// hello is the last Hello's answer, helloed whether it still holds: a
	// Hello is repeated only after a change (a down NMX-C is waited for
	// once).
	var hello error
	helloed := false
	if resp.GrpcEnabled && app.Status == "ok" {
		hello, helloed = sw.Hello(ctx), true
		if hello == nil {
			if got, err := sw.StaticConfig(ctx, []fabric.ConfigKey{topoKey}); err == nil && len(got) == 1 && got[0].Value == topology {
				return true, nil
			}
		}
	}
	changed := false
	if !cl.Enabled() {
		if _, err := sw.SetCluster(ctx, true); err != nil {
			return false, err
		}
		resp.ScaleUpFabricStateEnabled, changed = true, true
	}
	if !resp.GrpcEnabled {
		if err := sw.SetAppManager(ctx, fabric.AppController, true); err != nil {
			return false, err
		}
		resp.GrpcEnabled, changed = true, true
	}
	if changed {
		if app, err = sw.App(ctx, fabric.AppController); err != nil {
			return false, err
		}
		helloed = false
	}
	if !app.Installed || app.Status != "ok" {
		return false, fmt.Errorf("switch %s: %s is not ready (status %q, %s)", sw.NodeID(), fabric.AppController, app.Status, app.Reason)
	}
	if !helloed {
		hello = sw.Hello(ctx)
	}
	if hello != nil {
		return false, hello
	}
	return false, sw.SetStaticConfig(ctx, []fabric.ConfigEntry{{File: fabric.FileFM, Key: fabric.KeyTopology, Value: topology}})
}

// BatchSetScaleUpFabricState enables or disables the fabric cluster (and
// saves the configuration) on every caller-supplied switch, concurrently.
// The reply's job_id is empty: nothing runs after it.
func (m *rackManager) BatchSetScaleUpFabricState(ctx context.Context, req *rmspb.BatchSetScaleUpFabricStateRequest) (*rmspb.BatchSetScaleUpFabricStateResponse, error) {
	nodes, refusal, err := m.fabricNodes(req.GetNodes(), "", true)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		return &rmspb.BatchSetScaleUpFabricStateResponse{Response: noNodesResponse()}, nil
	}
	want := "disabled"
	if req.GetEnabled() {
		want = "enabled"
	}
	results, err := m.eachLeasedNode(ctx, "BatchSetScaleUpFabricState", nodes, fabricCheck, nil,
		m.fabricOp(nodes, func(ctx context.Context, _ int, sw *fabric.Switch) error {
			_, err := sw.SetCluster(ctx, req.GetEnabled())
			return err
		}))
	if err != nil {
		return nil, err
	}
	return &rmspb.BatchSetScaleUpFabricStateResponse{Response: batchResponse(results, func(r []nodeResult, st *rmspb.NodeOperationStats) string {
		msg := fmt.Sprintf("Scale-up fabric state %s on %d/%d switches", want, st.GetSuccessfulNodes(), st.GetTotalNodes())
		if st.GetFailedNodes() > 0 {
			msg += "; failed: " + summarise(failureList(r, "node_id=%s: %v"), "; ")
		}
		return clip(msg, maxMessage)
	})}, nil
}

// GetScaleUpFabricState reads the cluster state of one switch; state_json
// is the switch's own document (clusterStateDoc).
func (m *rackManager) GetScaleUpFabricState(ctx context.Context, req *rmspb.GetScaleUpFabricStateRequest) (*rmspb.GetScaleUpFabricStateResponse, error) {
	resp := &rmspb.GetScaleUpFabricStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	n, refusal, err := m.fabricNode(req.GetNode(), false)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		resp.ErrorMessage = clip(refusal, maxMessage)
		return resp, nil
	}
	var st fabric.ClusterState
	err = m.onFabricSwitch(ctx, "GetScaleUpFabricState", n, false, func(ctx context.Context, sw *fabric.Switch) error {
		var rerr error
		st, rerr = sw.Cluster(ctx)
		return rerr
	})
	if err != nil {
		resp.ErrorMessage = clip(err.Error(), maxMessage)
		return resp, nil
	}
	resp.Status, resp.StateJson = rmspb.ReturnCode_RETURN_CODE_SUCCESS, clusterStateDoc(n.ID, st)
	return resp, nil
}

// BatchGetScaleUpFabricServiceStatus reads the cluster and nmx-controller
// status of every caller-supplied switch; status_json is the switch's own
// app document (serviceStatusDoc). The top-level status is about the
// call; each switch's health, or why it could not be read, is in its map
// entry. The map is keyed by node_id: a node_id given twice is refused.
// No node at all is INVALID_ARGUMENT: the reply has no message field.
func (m *rackManager) BatchGetScaleUpFabricServiceStatus(ctx context.Context, req *rmspb.BatchGetScaleUpFabricServiceStatusRequest) (*rmspb.BatchGetScaleUpFabricServiceStatusResponse, error) {
	resp := &rmspb.BatchGetScaleUpFabricServiceStatusResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE,
		ServiceStatuses: map[string]*rmspb.ScaleUpFabricServiceStatusEntry{}, Stats: &rmspb.NodeOperationStats{}}
	nodes, refusal, err := m.fabricNodes(req.GetNodes(), "", false)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		return nil, invalidWithoutMessage(refusal)
	}
	ids := map[string]int{}
	for _, n := range nodes {
		ids[n.ID]++
	}
	check := func(n hw.Node) error {
		if ids[n.ID] > 1 {
			return fmt.Errorf("node_id %s is given %d times; statuses are keyed by node_id", hw.QuoteShort(n.ID), ids[n.ID])
		}
		return fabricCheck(n)
	}
	statuses := make([]string, len(nodes))
	results := m.eachNode(ctx, nodes, check, m.fabricOp(nodes, func(ctx context.Context, i int, sw *fabric.Switch) error {
		cl, err := sw.Cluster(ctx)
		if err != nil {
			return err
		}
		app, err := sw.App(ctx, fabric.AppController)
		if err != nil {
			return err
		}
		statuses[i] = serviceStatusDoc(nodes[i].ID, cl, app)
		return nil
	}))
	resp.Status = rmspb.ReturnCode_RETURN_CODE_SUCCESS
	resp.Stats.TotalNodes = uint32(len(results))
	for i, r := range results {
		entry := &rmspb.ScaleUpFabricServiceStatusEntry{}
		if r.err != nil {
			entry.ErrorMessage = clip(r.err.Error(), maxNodeError)
			resp.Stats.FailedNodes++
		} else {
			entry.StatusJson = statuses[i]
			resp.Stats.SuccessfulNodes++
		}
		if _, seen := resp.ServiceStatuses[r.nodeID]; !seen {
			resp.ServiceStatuses[r.nodeID] = entry
		}
	}
	return resp, nil
}

// telemetryResultJSON is SetScaleUpFabricTelemetryInterfaceState's
// result_json.
type telemetryResultJSON struct {
	// Status ("success") and State (the gNMI server state reached) are
	// upstream's result (its gnmi_service); the other keys are rmsd's.
	Status  string `json:"status"`
	State   string `json:"state"`
	NodeID  string `json:"node_id"`
	Service string `json:"service"`
	Enabled bool   `json:"enabled"`
	// GNMIVersion is what gNMI Capabilities reported after enabling;
	// CapabilitiesError why that check failed (the state is set anyway).
	GNMIVersion       string `json:"gnmi_version,omitempty"`
	CapabilitiesError string `json:"capabilities_error,omitempty"`
}

// SetScaleUpFabricTelemetryInterfaceState turns the switch's gNMI server
// on or off and verifies it; after enabling, a gNMI Capabilities call with
// the switch's login checks that it answers (reported in result_json).
func (m *rackManager) SetScaleUpFabricTelemetryInterfaceState(ctx context.Context, req *rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest) (*rmspb.SetScaleUpFabricTelemetryInterfaceStateResponse, error) {
	resp := &rmspb.SetScaleUpFabricTelemetryInterfaceStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	n, refusal, err := m.fabricNode(req.GetNode(), true)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		resp.ErrorMessage = clip(refusal, maxMessage)
		return resp, nil
	}
	out := telemetryResultJSON{Status: "success", State: "disabled", NodeID: n.ID, Service: "gnmi-server", Enabled: req.GetEnable()}
	if req.GetEnable() {
		out.State = "enabled"
	}
	err = m.onFabricSwitch(ctx, "SetScaleUpFabricTelemetryInterfaceState", n, true, func(ctx context.Context, sw *fabric.Switch) error {
		if err := sw.SetGNMI(ctx, req.GetEnable()); err != nil {
			return err
		}
		if req.GetEnable() {
			v, err := sw.GNMICapabilities(ctx)
			out.GNMIVersion = clip(v, maxEchoed)
			if err != nil {
				out.CapabilitiesError = clip(err.Error(), maxNodeError)
			}
		}
		return nil
	})
	if err != nil {
		resp.ErrorMessage = clip(err.Error(), maxMessage)
		return resp, nil
	}
	b, _ := json.Marshal(out)
	resp.Status, resp.ResultJson = rmspb.ReturnCode_RETURN_CODE_SUCCESS, string(b)
	return resp, nil
}

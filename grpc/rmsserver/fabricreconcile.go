package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fabricsync"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// fabricAttrPrefix starts the node descriptor attributes V2 maps onto
// fm_config keys of the primary.
const fabricAttrPrefix = "fm_config:"

// ConfigureScaleUpFabricManager starts the declarative scale-up fabric
// reconcile of one rack as a job (hw/fabricsync; poll it with
// GetJobStatus). A request the contract calls invalid (no nodes, an empty
// or malformed topology, a malformed or duplicate static config, a
// non-switch node, an unknown primary, bad secondary node IPs, an
// unsupported layout) is INVALID_ARGUMENT before any job. Admission is one job-engine request,
// all or nothing: the job on the rack's sentinel node and one reservation
// child per switch; a reconcile (or any other job) already holding the
// rack's sentinel or one of the switches is FAILED_PRECONDITION, naming
// that job.
func (m *rackManagerV2) ConfigureScaleUpFabricManager(ctx context.Context, req *rmspbv2.ConfigureScaleUpFabricManagerRequest) (*rmspbv2.ConfigureScaleUpFabricManagerResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "nodes is required: the switches of the scale-up fabric")
	}
	ids := []idField{{"domain", req.GetDomain()}, {"primary_switch_node_id", req.GetPrimarySwitchNodeId()}}
	for i, f := range req.GetLayout().GetFabrics() {
		ids = append(ids, idField{fmt.Sprintf("layout.fabrics[%d].primary_switch_node_id", i), f.GetPrimarySwitchNodeId()})
	}
	if err := checkIDs(ids...); err != nil {
		return nil, err
	}
	if p := fabricConfigProblem(req.GetConfig()); p != "" {
		return nil, status.Error(codes.InvalidArgument, p)
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	var compute []hw.Node
	// An empty compute_nodes is no compute inventory.
	hasCompute := len(req.GetComputeNodes().GetNodes()) > 0
	if hasCompute {
		if compute, err = m.deps.nodesFromProto(req.GetComputeNodes()); err != nil {
			return nil, err
		}
	}
	cfg := req.GetConfig()
	fr := fabricsync.Request{Switches: nodes, Primary: req.GetPrimarySwitchNodeId(), Topology: cfg.GetTopologyType(),
		Bridge: bridgedAttributes(req.GetNodes()), Insecure: m.deps.SwitchCert.Insecure}
	for _, e := range cfg.GetExtraStaticConfigs() {
		fr.Extra = append(fr.Extra, fabricEntry(e))
	}
	plan, err := fabricsync.Check(fr)
	if err != nil {
		return nil, fabricInvalid(err)
	}
	preference, err := fabricsync.CheckLayout(layoutFromProto(req.GetLayout()), req.GetPrimarySwitchNodeId() != "", nodes, compute, hasCompute)
	if err != nil {
		return nil, fabricInvalid(err)
	}
	open := m.fabricOpener(req.GetDomain())
	if m.deps.Jobs == nil || m.deps.Nodes == nil || open == nil {
		return nil, errUnavailable("the scale-up fabric reconcile")
	}
	deps := fabricsync.Deps{Open: open, Slot: m.switchSlot, Render: renderFabricStatus}
	resp := &rmspbv2.ConfigureScaleUpFabricManagerResponse{}
	if req.GetLayout() != nil {
		// The selection is part of the answer: positions resolve now.
		primary := preference
		if primary == "" {
			p, err := fabricsync.Elect(ctx, m.switchSlot, nodes, true)
			if err != nil {
				return nil, status.Errorf(codes.FailedPrecondition, "layout: %s", clip(err.Error(), maxMessage))
			}
			primary = p.ID
		}
		plan = plan.WithPrimary(primary)
		sel := &rmspbv2.ScaleUpFabricMembers{PrimarySwitchNodeId: primary}
		for _, n := range compute {
			sel.ComputeNodeIds = append(sel.ComputeNodeIds, n.ID)
		}
		for _, n := range nodes {
			sel.SwitchNodeIds = append(sel.SwitchNodeIds, n.ID)
		}
		resp.SelectedFabrics = []*rmspbv2.ScaleUpFabricMembers{sel}
	}

	id := newJobID()
	res := &messages.Reservation{Description: "Reserved by scale-up fabric reconcile job " + id}
	res.Nodes = nodeRefs(ctx, nodes)
	spec := messages.JobSpec{ID: id, Type: messages.TypeConfigureScaleUpFabricManagerV2, RackID: plan.RackID(),
		NodeID: fabricsync.SentinelNode(plan.RackID()), Description: "Scale-up fabric reconcile queued"}
	rep, err := m.deps.Jobs.CreateReserved(ctx, spec, plan.Workflow(deps), res)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		return nil, fabricRefusal(refused, rep.Conflicts)
	case err != nil:
		(&rackManager{deps: m.deps, log: m.log}).cancelUnanswered(ctx, id, err)
		return nil, engineError(err)
	}
	m.log.Info().Str("rack_id", plan.RackID()).Str("job_id", id).Int("switches", len(nodes)).Msg("scale-up fabric reconcile started")
	resp.JobId = id
	return resp, nil
}

// fabricConfigProblem checks the reconcile's config as v1 checks its
// topology (topologyProblem), and its extra static configs.
func fabricConfigProblem(cfg *rmspbv2.ScaleUpFabricConfig) string {
	if p := topologyProblem("config.topology_type", cfg.GetTopologyType()); p != "" {
		return p
	}
	return staticConfigProblem(cfg.GetExtraStaticConfigs())
}

// fabricOpener builds the reconcile's fabric clients: Deps.FabricSwitch
// when set, else fabric.New with Deps.Fabric (whose TLS identity is the
// default switch domain's); nil when neither is configured.
func (m *rackManagerV2) fabricOpener(domain string) func(hw.Node) (fabricsync.Switch, error) {
	if domain == "" {
		domain = m.deps.SwitchCert.DefaultDomain
	}
	switch {
	case m.deps.FabricSwitch != nil:
		return func(n hw.Node) (fabricsync.Switch, error) { return m.deps.FabricSwitch(n, domain) }
	case m.deps.Fabric != nil:
		opts := *m.deps.Fabric
		return func(n hw.Node) (fabricsync.Switch, error) { return fabric.New(n.ID, *n.Host, opts) }
	default:
		return nil
	}
}

// switchSlot reads a switch's slot number in its rack (NVUE
// chassis-location) as one node operation.
func (m *rackManagerV2) switchSlot(ctx context.Context, n hw.Node) (*int64, error) {
	var slot *int64
	err := m.deps.Nodes.One(ctx, n, func(ctx context.Context, _ int, d platform.Device) error {
		r, ok := d.(platform.DeviceInfoReader)
		if !ok {
			return fmt.Errorf("%s reports no rack position: %w", n.ID, hw.ErrUnsupported)
		}
		info, err := r.DeviceInfo(ctx)
		slot = info.SlotNumber
		return err
	})
	return slot, err
}

// fabricRefusal is the gRPC status of a reconcile the job engine refused:
// a busy rack or switch is FAILED_PRECONDITION (the caller polls the
// running job and resubmits), a full or stopping engine UNAVAILABLE or
// RESOURCE_EXHAUSTED.
func fabricRefusal(refused *messages.RefusedError, conflicts []messages.RejectedTarget) error {
	msgs := []string{refused.Message}
	for _, c := range conflicts {
		if c.Message != refused.Message {
			msgs = append(msgs, c.Message)
		}
	}
	msg := clip("scale-up fabric reconcile not started: "+strings.Join(msgs, "; "), maxMessage)
	switch {
	case errors.Is(refused, messages.ErrNodeBusy), errors.Is(refused, messages.ErrRackBusy):
		return status.Error(codes.FailedPrecondition, msg)
	case errors.Is(refused, messages.ErrDuplicateTarget):
		return status.Error(codes.InvalidArgument, msg)
	case errors.Is(refused, messages.ErrAtCapacity):
		return status.Error(codes.ResourceExhausted, msg)
	case errors.Is(refused, messages.ErrShuttingDown):
		return status.Error(codes.Unavailable, msg)
	default:
		return status.Error(codes.Internal, msg)
	}
}

func fabricInvalid(err error) error {
	var inv *fabricsync.InvalidError
	if errors.As(err, &inv) {
		return status.Error(codes.InvalidArgument, clip(err.Error(), maxMessage))
	}
	return status.Error(codes.Internal, clip(err.Error(), maxMessage))
}

// bridgedAttributes are the fm_config:<key> descriptor attributes of each
// node, by node id.
func bridgedAttributes(set *rmspb.NodeSet) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, ni := range set.GetNodes() {
		for k, v := range ni.GetNodeDescriptor().GetAttributes() {
			if key, ok := strings.CutPrefix(k, fabricAttrPrefix); ok {
				if out[ni.GetNodeId()] == nil {
					out[ni.GetNodeId()] = map[string]string{}
				}
				out[ni.GetNodeId()][key] = v
			}
		}
	}
	return out
}

func layoutFromProto(l *rmspbv2.ScaleUpFabricLayout) *fabricsync.Layout {
	if l == nil {
		return nil
	}
	out := &fabricsync.Layout{}
	for _, f := range l.GetFabrics() {
		out.Fabrics = append(out.Fabrics, fabricsync.FabricSpec{ComputeTrays: f.GetComputeTrayCount(),
			SwitchTrays: f.GetSwitchTrayCount(), Primary: f.GetPrimarySwitchNodeId()})
	}
	return out
}

// renderFabricStatus is result_json: protobuf JSON of
// rack_manager.ScaleUpFabricStatus, with its proto field names and every
// field present.
func renderFabricStatus(s fabricsync.Status) (string, error) {
	st := &rmspb.ScaleUpFabricStatus{TopologyType: s.Topology}
	for _, e := range s.Extra {
		st.ExtraStaticConfigs = append(st.ExtraStaticConfigs, &rmspb.ScaleUpFabricStaticConfig{ConfigFileName: e.File, Key: e.Key, Value: e.Value})
	}
	for _, sw := range s.Switches {
		st.Switches = append(st.Switches, &rmspb.ScaleUpFabricSwitchStatus{NodeId: sw.NodeID, Enabled: sw.Enabled,
			FabricManagerStatus: sw.ManagerStatus, ErrorMessage: sw.Error})
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("scale-up fabric status: %w", err)
	}
	return string(b), nil
}

func fabricEntry(e *rmspb.ScaleUpFabricStaticConfig) fabric.ConfigEntry {
	return fabric.ConfigEntry{File: e.GetConfigFileName(), Key: e.GetKey(), Value: e.GetValue()}
}

package rmsserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/platform"
)

// InspectScaleUpFabrics is a read-only live inspection (proto comments of
// the RPC): the switch inventory is read for each switch's physical
// identity and enabled controller, which is sampled over NMX-C in the same
// operation, the optional compute inventory's BMCs for theirs; then every
// sampled controller, in inventory order, has its members resolved to the
// caller's node ids by chassis serial and slot. Failed reads (a failed
// sampling among them) and unresolved or ambiguous members are collection
// errors, kept apart from the observed (NORMAL / ABNORMAL / UNKNOWN) status.

// trayKey is a tray's physical identity: chassis serial and slot.
type trayKey struct {
	serial string
	slot   int64
}

func (k trayKey) String() string { return fmt.Sprintf("chassis %s slot %d", k.serial, k.slot) }

// identities maps physical identities to the caller's node ids; a key
// with more than one id is ambiguous.
type identities map[trayKey][]string

func (m identities) add(info platform.DeviceInfo, id string) bool {
	if strings.TrimSpace(info.ChassisSerial) == "" || info.SlotNumber == nil {
		return false
	}
	k := trayKey{info.ChassisSerial, *info.SlotNumber}
	m[k] = append(m[k], id)
	return true
}

// inspectRefused is the reply of an inspection that observed nothing.
func inspectRefused(msg string) *rmspb.InspectScaleUpFabricsResponse {
	return &rmspb.InspectScaleUpFabricsResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorMessage: msg}
}

// InspectScaleUpFabrics observes every enabled controller of the caller's
// switches.
func (m *rackManager) InspectScaleUpFabrics(ctx context.Context, req *rmspb.InspectScaleUpFabricsRequest) (*rmspb.InspectScaleUpFabricsResponse, error) {
	nodes, refusal, err := m.fabricNodes(req.GetNodes(), req.GetDomain(), false)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		return inspectRefused(refusal), nil
	}
	computes, err := m.deps.nodesFromProto(req.GetComputeNodes())
	if err != nil {
		return nil, err
	}
	resp := &rmspb.InspectScaleUpFabricsResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}
	discoveryErr := func(id, msg string) {
		resp.DiscoveryErrors = append(resp.DiscoveryErrors, &rmspb.ScaleUpFabricInspectionError{NodeId: id, Message: clip(msg, maxNodeError)})
	}

	// Discovery: which switches run an enabled controller, and where every
	// switch and compute tray is; an enabled controller is sampled in the
	// same operation, so a failed sampling is that switch's discovery error.
	enabled := make([]bool, len(nodes))
	switchInfo := make([]platform.DeviceInfo, len(nodes))
	samples := make([]fabric.Sample, len(nodes))
	results := m.eachNode(ctx, nodes, fabricCheck, func(ctx context.Context, i int, d platform.Device) error {
		if r, ok := d.(platform.DeviceInfoReader); ok {
			info, err := r.DeviceInfo(ctx)
			if err != nil {
				return err
			}
			switchInfo[i] = info
		}
		return m.fabricOp(nodes, func(ctx context.Context, i int, sw *fabric.Switch) error {
			cl, err := sw.Cluster(ctx)
			if err != nil {
				return err
			}
			if enabled[i] = cl.Enabled(); enabled[i] {
				samples[i] = sw.Sample(ctx)
			}
			return nil
		})(ctx, i, d)
	})
	switchIDs := identities{}
	for i, r := range results {
		if r.err != nil {
			discoveryErr(r.nodeID, r.err.Error())
			if !enabled[i] {
				continue
			}
			// Only the sampling failed: the switch's position was read
			// and still resolves other controllers' members.
		}
		if !switchIDs.add(switchInfo[i], nodes[i].ID) {
			discoveryErr(nodes[i].ID, "the switch reports no chassis serial and slot number")
		}
	}
	computeIDs := identities{}
	if len(computes) > 0 {
		infos := make([]platform.DeviceInfo, len(computes))
		cres := m.eachNode(ctx, computes, func(n hw.Node) error {
			if n.Type.Kind() != hw.KindCompute {
				return fmt.Errorf("compute_nodes holds compute trays only, not %s nodes", n.Type.Name())
			}
			return requireBMC(n)
		}, func(ctx context.Context, i int, d platform.Device) error {
			r, ok := d.(platform.DeviceInfoReader)
			if !ok {
				return fmt.Errorf("%s nodes report no tray position: %w", computes[i].Type.Name(), hw.ErrUnsupported)
			}
			var err error
			infos[i], err = r.DeviceInfo(ctx)
			return err
		})
		for i, r := range cres {
			if r.err != nil {
				discoveryErr(r.nodeID, r.err.Error())
				continue
			}
			if !computeIDs.add(infos[i], computes[i].ID) {
				discoveryErr(computes[i].ID, "the compute BMC reports no chassis serial and slot number")
			}
		}
	}

	// One observation per sampled controller, in inventory order; a
	// controller whose sampling failed has its discovery error instead.
	failed := len(resp.DiscoveryErrors)
	for i := range nodes {
		if !enabled[i] || results[i].err != nil {
			continue
		}
		obs := observe(nodes[i].ID, samples[i], switchIDs, computeIDs)
		failed += len(obs.InspectionErrors)
		resp.Fabrics = append(resp.Fabrics, obs)
	}
	if failed > 0 {
		resp.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
		resp.ErrorMessage = clip(fmt.Sprintf("%d collection or interpretation errors (%d discovery); %d fabrics observed",
			failed, len(resp.DiscoveryErrors), len(resp.Fabrics)), maxMessage)
	}
	return resp, nil
}

// worst folds indicators: ABNORMAL over UNKNOWN over NORMAL; no evidence
// is UNKNOWN.
func worst(healths ...string) rmspb.ScaleUpFabricReportedStatus {
	if len(healths) == 0 {
		return rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_UNKNOWN
	}
	out := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_NORMAL
	for _, h := range healths {
		switch h {
		case fabric.HealthDegraded:
			return rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_ABNORMAL
		case fabric.HealthHealthy:
		default:
			out = rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_UNKNOWN
		}
	}
	return out
}

// observe interprets one controller's sample.
func observe(primary string, s fabric.Sample, switchIDs, computeIDs identities) *rmspb.ScaleUpFabricInspectionObservation {
	obs := &rmspb.ScaleUpFabricInspectionObservation{PrimarySwitchNodeId: primary, ComponentStatus: &rmspb.ScaleUpFabricComponentStatus{}}
	inspErr := func(id, msg string) {
		obs.InspectionErrors = append(obs.InspectionErrors, &rmspb.ScaleUpFabricInspectionError{NodeId: id, Message: clip(msg, maxNodeError)})
	}
	for _, err := range []error{s.DomainErr, s.TopologyErr, s.ComputesErr, s.SwitchesErr} {
		if err != nil {
			inspErr(primary, err.Error())
		}
	}
	cs := obs.ComponentStatus
	switch {
	case s.DomainErr != nil:
	case s.ControlPlane == fabric.PlaneConfigured:
		obs.ControlPlaneState = rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_CONFIGURED
	case strings.Contains(s.ControlPlane, "TIMEOUT") || strings.Contains(s.ControlPlane, "ERROR") || strings.Contains(s.ControlPlane, "FAIL"):
		obs.ControlPlaneState = rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_FAILED
	}
	if s.DomainErr == nil {
		cs.Controller = worst(s.ControllerHealth)
	}
	var gpus, asics, links []string
	for _, d := range s.Devices {
		switch d.Type {
		case "GPU":
			gpus = append(gpus, d.Health)
		case "SWITCH":
			asics = append(asics, d.Health)
		}
	}
	for _, p := range s.Ports {
		if !p.AdminUp {
			continue // administratively down ports do not contribute
		}
		h := fabric.HealthHealthy
		if !p.OperUp {
			h = fabric.HealthDegraded
		}
		links = append(links, h)
	}
	resolve := func(members []fabric.Member, ids identities, what string, into *[]string) []string {
		var healths []string
		for _, mb := range members {
			healths = append(healths, mb.Health)
			k := trayKey{mb.ChassisSerial, mb.SlotNumber}
			switch owners := ids[k]; len(owners) {
			case 0:
				inspErr("", fmt.Sprintf("observed %s tray at %s is not in the caller's inventory", what, k))
			case 1:
				*into = append(*into, owners[0])
			default:
				for _, id := range owners {
					inspErr(id, fmt.Sprintf("observed %s tray at %s matches %d caller nodes", what, k, len(owners)))
				}
			}
		}
		return healths
	}
	var switchNodes, computeNodes []string
	swHealth := resolve(s.Switches, switchIDs, "switch", &switchNodes)
	cpHealth := resolve(s.Computes, computeIDs, "compute", &computeNodes)
	if s.TopologyErr == nil && s.ComputesErr == nil {
		cs.Compute = worst(append(gpus, cpHealth...)...)
	}
	if s.TopologyErr == nil && s.SwitchesErr == nil {
		cs.Switches = worst(append(asics, swHealth...)...)
	}
	if s.TopologyErr == nil {
		cs.Links = worst(links...)
	}
	slices.Sort(switchNodes)
	slices.Sort(computeNodes)
	obs.SwitchNodeIds, obs.ComputeNodeIds = slices.Compact(switchNodes), slices.Compact(computeNodes)

	abnormal := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_ABNORMAL
	normal := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_NORMAL
	comps := []rmspb.ScaleUpFabricReportedStatus{cs.Controller, cs.Compute, cs.Switches, cs.Links}
	switch {
	case obs.ControlPlaneState == rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_FAILED || slices.Contains(comps, abnormal):
		obs.Status = abnormal
	case obs.ControlPlaneState == rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_CONFIGURED &&
		len(obs.InspectionErrors) == 0 && !slices.ContainsFunc(comps, func(c rmspb.ScaleUpFabricReportedStatus) bool { return c != normal }):
		obs.Status = normal
	default:
		obs.Status = rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_UNKNOWN
	}
	return obs
}

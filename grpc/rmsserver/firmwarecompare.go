package rmsserver

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/compare"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/platform"
)

// CompareFirmwareObject is a synchronous read, like the firmware inventory
// RPCs: the proposed manifest is parsed, never stored or downloaded; each
// node's inventory is read without a job or a lease; and each component
// the node's type gets from the manifest (hw/firmware/selector, under the
// request's filters and channel) is compared with it (hw/firmware/compare).

// comparePlan is what one request compares: the manifest, and the
// components each node type gets from it.
type comparePlan struct {
	objectID string
	md       manifest.Metadata
	filters  selector.Filters
	channel  string
	byType   map[hw.NodeType]comparedComponents
}

// comparedComponents are the components a node type gets, or why it gets
// none.
type comparedComponents struct {
	comps []manifest.Component
	err   error
}

// components returns what node type t gets, worked out once per type.
func (p *comparePlan) components(t hw.NodeType) comparedComponents {
	if s, ok := p.byType[t]; ok {
		return s
	}
	comps, listed := selector.Components(p.md, t, p.filters, p.channel)
	s := comparedComponents{comps: comps}
	switch {
	case !listed:
		s.err = fmt.Errorf("the component filters do not list node type %s", t.Name())
	case len(comps) == 0:
		s.err = &selector.NoComponentsError{ObjectID: p.objectID, Type: t, Channel: selector.Channel(p.channel), Filtered: !p.filters.IsZero()}
	}
	p.byType[t] = s
	return s
}

// check is the per-node precondition: the node's type gets components, and
// the node has the endpoint its inventory is read through.
func (p *comparePlan) check(n hw.Node) error {
	if err := p.components(n.Type).err; err != nil {
		return err
	}
	return requireInventoryEndpoint(n)
}

// CompareFirmwareObject compares a proposed manifest with the firmware
// caller-supplied nodes run, concurrently. An invalid manifest, node or
// filter is INVALID_ARGUMENT; a node that cannot be compared (unreadable,
// or its type gets nothing) fails on its own, its components Unverified.
func (m *rackManager) CompareFirmwareObject(ctx context.Context, req *rmspb.CompareFirmwareObjectRequest) (*rmspb.CompareFirmwareObjectResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.CompareFirmwareObjectResponse{Response: noNodesResponse(), Nodes: []*rmspb.NodeFirmwareManifestComparison{}}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	plan, err := newComparePlan(req)
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("firmware inventory")
	}
	invs := make([][]platform.Firmware, len(nodes))
	results := m.eachNode(ctx, nodes, plan.check, func(ctx context.Context, i int, d platform.Device) error {
		inv, err := d.FirmwareInventory(ctx)
		invs[i] = inv
		return err
	})
	resp := &rmspb.CompareFirmwareObjectResponse{ObjectId: plan.objectID, Nodes: make([]*rmspb.NodeFirmwareManifestComparison, 0, len(nodes))}
	matched := 0
	for i, r := range results {
		comps := plan.components(nodes[i].Type).comps
		var rs []compare.Result
		if r.err == nil {
			rs = compare.Node(comps, invs[i])
		} else {
			rs = compare.NotCompared(comps, clip("node not compared: "+r.err.Error(), maxNodeError))
		}
		nc := nodeComparisonToProto(r.nodeID, rs)
		if nc.GetMatchesManifest() && r.err == nil {
			matched++
		}
		resp.Nodes = append(resp.Nodes, nc)
	}
	resp.Response = batchResponse(results, compareMessage(plan.objectID, matched))
	resp.MatchesManifest = resp.GetResponse().GetStats().GetFailedNodes() == 0 && matched == len(nodes)
	return resp, nil
}

// newComparePlan parses the request's manifest and filters.
func newComparePlan(req *rmspb.CompareFirmwareObjectRequest) (*comparePlan, error) {
	if n := len(req.GetConfigJson()); n > maxConfigJSON {
		return nil, status.Errorf(codes.InvalidArgument, "config_json is %d bytes; at most %d are accepted", n, maxConfigJSON)
	}
	mf, err := manifest.Parse([]byte(req.GetConfigJson()), manifest.Options{})
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, clip(err.Error(), maxMessage))
	}
	filters, err := componentFilters(req.GetComponentFilters(), req.GetNodeDescriptorComponentFilters(), nil)
	if err != nil {
		return nil, err
	}
	return &comparePlan{objectID: mf.ID, md: mf.Metadata(), filters: filters, channel: req.GetFirmwareType(),
		byType: map[hw.NodeType]comparedComponents{}}, nil
}

// comparisonStatusWire maps a comparison's status to the wire's.
var comparisonStatusWire = map[compare.Status]rmspb.FirmwareComparisonStatus{
	compare.Matched:    rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MATCHED,
	compare.Mismatched: rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MISMATCHED,
	compare.Missing:    rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MISSING,
	compare.Unverified: rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_UNVERIFIED,
}

// nodeComparisonToProto converts one node's comparison; every text a
// manifest or a device supplied is bounded.
func nodeComparisonToProto(nodeID string, rs []compare.Result) *rmspb.NodeFirmwareManifestComparison {
	out := &rmspb.NodeFirmwareManifestComparison{NodeId: nodeID, MatchesManifest: compare.Matches(rs),
		Components: make([]*rmspb.FirmwareManifestComponentComparison, 0, len(rs))}
	for _, r := range rs {
		out.Components = append(out.Components, &rmspb.FirmwareManifestComponentComparison{
			Component: clip(r.Component, maxEchoed), InstalledComponent: clip(r.InstalledComponent, maxEchoed),
			InstalledVersion: clip(r.InstalledVersion, maxEchoed), ProposedVersion: clip(r.ProposedVersion, maxEchoed),
			Status: comparisonStatusWire[r.Status], Target: clip(r.Target, maxEchoed),
			Reason: clip(r.Reason, maxNodeError), SkuId: clip(r.SKUID, maxEchoed),
		})
	}
	return out
}

// compareMessage words a CompareFirmwareObject reply (rmsd's wording; the
// RPC is not upstream's yet): the counts, then the first failures.
func compareMessage(objectID string, matched int) batchMessage {
	return func(results []nodeResult, st *rmspb.NodeOperationStats) string {
		msg := fmt.Sprintf("Compared firmware object %s with %d/%d nodes: %d match, %d differ",
			clip(objectID, maxEchoed), st.GetSuccessfulNodes(), st.GetTotalNodes(), matched, int(st.GetSuccessfulNodes())-matched)
		if st.GetFailedNodes() == 0 {
			return msg
		}
		return msg + "; failed: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
	}
}

package rmsserver

import (
	"context"
	"errors"
	"sort"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/store"
)

// The firmware object RPCs apply a manifest to caller-supplied nodes: each
// node gets the components and packages hw/firmware/selector picks for its
// type (component filters, firmware_type channel, NIC opt-in, Supermicro
// GB300 order), always activated; a node of a type the filters leave out
// is not updated. ApplyStoredFirmwareObject uses an available catalog
// object's cached packages and records a fully admitted apply in the
// history; ApplyFirmwareObject's children download the packages they need
// into a temporary cache that the parent's cleanup plan removes once every
// child is terminal, and it records nothing.

// objectApply is what both RPCs share.
type objectApply struct {
	operation string
	rackID    string
	objectID  string
	metadata  manifest.Metadata
	filters   selector.Filters
	channel   string
	force     bool
}

// objectBatch plans the update of every node; dir is where the object's
// packages are (each target's File is relative to it when dir is "").
func (m *rackManager) objectBatch(a objectApply, nodes []hw.Node, dir string) firmwareBatch {
	b := firmwareBatch{operation: a.operation, rackID: a.rackID}
	for _, n := range nodes {
		if n.RackID == "" {
			n.RackID = a.rackID
		}
		nu := nodeUpdate{node: n, err: errors.Join(identityProblem(n), addressProblem(n))}
		if nu.err == nil {
			nu.plan, nu.unselected, nu.err = m.objectPlan(a, n, dir)
		}
		b.nodes = append(b.nodes, nu)
	}
	if b.rackID == "" {
		b.rackID = commonRack(nodes)
	}
	return b
}

// objectPlan is one node's share of a firmware object.
func (m *rackManager) objectPlan(a objectApply, n hw.Node, dir string) (fwupdate.Plan, bool, error) {
	targets, err := selector.Targets(a.objectID, a.metadata, n.Type, a.filters, a.channel, dir)
	if err != nil {
		return fwupdate.Plan{}, false, err
	}
	if targets == nil {
		return fwupdate.Plan{}, true, nil
	}
	aps, err := m.expectedAPs(n)
	if err != nil {
		return fwupdate.Plan{}, false, err
	}
	return fwupdate.Plan{Node: n, Targets: targets, Activate: true, Force: a.force, ExpectedAPs: aps}, false, nil
}

// ApplyStoredFirmwareObject applies an available catalog object (object_id,
// or the default object of hardware_type) to the request's nodes, and
// records the apply in the history when every node was admitted
// (applystored.go). An unknown object is NOT_FOUND, one of another
// hardware type FAILED_PRECONDITION; one still downloading fails the
// batch in band.
func (m *rackManager) ApplyStoredFirmwareObject(ctx context.Context, req *rmspb.ApplyStoredFirmwareObjectRequest) (*rmspb.ApplyStoredFirmwareObjectResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"object_id", req.GetObjectId()}); err != nil {
		return nil, err
	}
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.ApplyStoredFirmwareObjectResponse{Response: noNodesResponse(), ObjectId: req.GetObjectId()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the deprecated global component filter is still honoured, as upstream does
	filters, err := componentFilters(req.GetComponentFilters(), req.GetNodeDescriptorComponentFilters(), req.GetComponents())
	if err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("firmware object apply")
	}
	const op = "ApplyStoredFirmwareObject"
	obj, refused, err := m.storedObject(ctx, op, req.GetObjectId(), req.GetHardwareType(), nodes)
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return &rmspb.ApplyStoredFirmwareObjectResponse{Response: refused, ObjectId: obj.ID}, nil
	}
	a := objectApply{operation: op, rackID: req.GetRackId(), objectID: obj.ID, metadata: obj.Metadata,
		filters: filters, channel: req.GetFirmwareType(), force: req.GetForceUpdate()}
	b := m.objectBatch(a, nodes, obj.Dir)
	res, err := m.startFirmwareBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	m.recordStoredApply(ctx, storedApply{op: op, obj: obj, rackID: b.rackID, channel: selector.Channel(req.GetFirmwareType()),
		nodes: nodes, response: res.response, parentID: res.parentID})
	return &rmspb.ApplyStoredFirmwareObjectResponse{Response: res.response, ObjectId: obj.ID, Jobs: res.jobs}, nil
}

// recordApply writes the apply history. The update runs whether or not
// the record could be written: a failure is logged, not answered.
func (m *rackManager) recordApply(ctx context.Context, r store.ApplyRecord) {
	if err := m.deps.Catalog.RecordApply(context.WithoutCancel(ctx), r); err != nil {
		m.log.Error().Str("object_id", r.ObjectID).Str("job_id", r.JobID).Err(loggedErr(err)).Msg("firmware apply started but not recorded in the history")
	}
}

// ApplyFirmwareObject applies a manifest given inline. It answers before
// downloading anything: the parent and one child per node are admitted at
// once, and each child first awaits the packages its node needs (and only
// those), downloaded once per apply into a temporary cache
// (applydownload.go), then updates its node as ApplyStoredFirmwareObject's
// children do. Nothing is stored; the cache is removed when the parent job
// ends. An invalid manifest is INVALID_ARGUMENT; a failed download fails
// the children that need the artifact, naming it.
func (m *rackManager) ApplyFirmwareObject(ctx context.Context, req *rmspb.ApplyFirmwareObjectRequest) (*rmspb.ApplyFirmwareObjectResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.ApplyFirmwareObjectResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	filters, err := componentFilters(req.GetComponentFilters(), req.GetNodeDescriptorComponentFilters(), nil)
	if err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("firmware object apply")
	}
	man, err := m.deps.Catalog.Parse(req.GetConfigJson())
	if err != nil {
		return nil, catalogStatus(err)
	}
	a := objectApply{operation: "ApplyFirmwareObject", rackID: req.GetRackId(), objectID: man.ID, metadata: man.Metadata(),
		filters: filters, channel: req.GetFirmwareType(), force: req.GetForceUpdate()}
	b := m.objectBatch(a, nodes, "")
	names := packagesOf(b)
	if len(names) == 0 { // every node refused or left out: nothing to fetch
		res, err := m.startFirmwareBatch(ctx, b)
		if err != nil {
			return nil, err
		}
		return &rmspb.ApplyFirmwareObjectResponse{Response: res.response, ObjectId: man.ID, Jobs: res.jobs}, nil
	}
	staging, err := m.deps.Catalog.Prepare(man, names, hw.NewSecret(req.GetAccessToken()))
	if err != nil {
		return nil, catalogStatus(err)
	}
	stageFirmwareBatch(&b, staging)
	res, err := m.startFirmwareBatch(ctx, b)
	if err != nil || res.parentID == "" {
		m.dropStaging(staging)
	}
	if err != nil {
		return nil, err
	}
	return &rmspb.ApplyFirmwareObjectResponse{Response: res.response, ObjectId: man.ID, Jobs: res.jobs}, nil
}

// packagesOf lists the package files the planned nodes need, each once,
// sorted.
func packagesOf(b firmwareBatch) []string {
	seen := map[string]bool{}
	for _, nu := range b.nodes {
		if nu.err != nil || nu.unselected {
			continue
		}
		for _, t := range nu.plan.Targets {
			seen[t.File] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// nodeIDs lists the nodes' ids, in order.
func nodeIDs(nodes []hw.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/switchimage"
	"github.com/rmsd/rmsd/messages"
)

// The switch system image RPCs install one NVOS image on caller-supplied
// switches: UpdateSwitchSystemImage from a file under firmware_dir,
// ApplyStoredSwitchSystemImage from an available catalog object's cache
// (recorded in the apply history when every switch is admitted), ApplySwitchSystemImage from a manifest
// given inline, its image downloaded into a temporary cache that the
// parent's cleanup removes. Each ends the same way as the firmware
// batches: one parent job and one child per switch (hw/switchimage),
// admitted in one engine request; one result per node in request order
// and one jobs[] entry per child, echoing the caller's node_id.

// imageSource is the image a batch installs.
type imageSource struct {
	path   string // absolute local path
	name   string // file name on the switch
	target string // build id, nvos-X.Y.Z
}

// imageNode is one node of a switch image batch.
type imageNode struct {
	node hw.Node
	// err refuses the node before admission (no child job).
	err error
}

// imageBatch is a switch image batch ready to be admitted.
type imageBatch struct {
	operation string
	rackID    string
	image     imageSource
	onie      bool
	nodes     []imageNode
	cleanup   *messages.CleanupPlan
	// gate, optional, wraps each child's workflow (stageImageBatch).
	gate func(wf messages.Workflow) messages.Workflow
}

// imageBatchResult is what the RPC answers.
type imageBatchResult struct {
	response *rmspb.NodeBatchResponse
	jobs     []*rmspb.SwitchSystemImageUpdateJobInfo
	started  []hw.Node
	parentID string
}

// newImageBatch checks each node: only a switch tray with a host endpoint
// takes an NVOS image.
func newImageBatch(operation, rackID string, nodes []hw.Node, image imageSource, onie bool) imageBatch {
	b := imageBatch{operation: operation, rackID: rackID, image: image, onie: onie}
	for _, n := range nodes {
		if n.RackID == "" {
			n.RackID = rackID
		}
		b.nodes = append(b.nodes, imageNode{node: n, err: switchImageProblem(n)})
	}
	if b.rackID == "" {
		b.rackID = commonRack(nodes)
	}
	return b
}

// switchImageProblem is why n cannot take an NVOS image, or nil.
func switchImageProblem(n hw.Node) error {
	if err := errors.Join(identityProblem(n), addressProblem(n)); err != nil {
		return err
	}
	if n.Type.Kind() != hw.KindSwitch {
		return fmt.Errorf("node %s is not an NVLink switch tray: only switches take NVOS system images", hw.QuoteShort(n.ID))
	}
	if n.Host == nil || n.Host.Host() == "" {
		return errors.New("host_endpoint is required to install an NVOS system image")
	}
	return nil
}

// ready reports whether some node of b can start.
func (b imageBatch) ready() bool {
	for _, in := range b.nodes {
		if in.err == nil {
			return true
		}
	}
	return false
}

// startImageBatch admits the batch (admitBatch): a parent of type switch
// system image update and one child per node that can start, and words
// its reply. The error is the engine's failure, already a gRPC status.
func (m *rackManager) startImageBatch(ctx context.Context, b imageBatch) (imageBatchResult, error) {
	deps := switchimage.Deps{Nodes: m.deps.Nodes, Timing: m.deps.SwitchImageTiming}
	nodes := make([]batchNode, len(b.nodes))
	for i, in := range b.nodes {
		nodes[i] = batchNode{node: in.node, err: in.err}
		if in.err == nil {
			p := switchimage.Plan{Node: in.node, File: b.image.path, ImageName: b.image.name, Target: b.image.target, AllowONIERecovery: b.onie}
			nodes[i].wf = p.Workflow(deps)
			if b.gate != nil {
				nodes[i].wf = b.gate(nodes[i].wf)
			}
		}
	}
	a, err := m.admitBatch(ctx, b.operation, messages.TypeSwitchSystemImageUpdate, b.rackID, nodes, b.cleanup)
	if err != nil {
		return imageBatchResult{}, err
	}
	return imageBatchResult{parentID: a.parentID, started: a.started,
		response: a.response(func(started int) batchMessage { return imageBatchMessage(b.operation, started) }),
		jobs: jobInfos(a, nodes, func(node, job string) *rmspb.SwitchSystemImageUpdateJobInfo {
			return &rmspb.SwitchSystemImageUpdateJobInfo{NodeId: node, JobId: job}
		})}, nil
}

// imageBatchMessage words a switch image batch reply.
func imageBatchMessage(operation string, started int) batchMessage {
	return func(results []nodeResult, st *rmspb.NodeOperationStats) string {
		msg := fmt.Sprintf("%s: switch system image update started for %d of %d nodes", operation, started, st.GetTotalNodes())
		if st.GetFailedNodes() == 0 {
			return msg + ". Use GetSwitchSystemImageJobStatus with response.job_id to track progress."
		}
		return msg + "; failed: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
	}
}

// failImageBatch answers a batch none of whose nodes starts: each fails
// with its own reason, or err.
func failImageBatch(b imageBatch, err error) *rmspb.NodeBatchResponse {
	results := make([]nodeResult, len(b.nodes))
	for i, in := range b.nodes {
		results[i] = nodeResult{nodeID: in.node.ID, err: in.err}
		if results[i].err == nil {
			results[i].err = err
		}
	}
	return batchResponse(results, func([]nodeResult, *rmspb.NodeOperationStats) string {
		return clip(fmt.Sprintf("%s: no switch system image update started: %v", b.operation, err), maxMessage)
	})
}

// errImage refuses an image before any job.
var errImage = errors.New("switch system image refused")

// imageTarget is the build id a switch reports once it runs name: from
// the single X.Y.Z in the file name, else from version when it is one.
func imageTarget(name, version string) (string, error) {
	if id, err := nvue.BuildIDFromFile(name); err == nil {
		return id, nil
	}
	if buildVersion.MatchString(strings.TrimSpace(version)) {
		return "nvos-" + strings.TrimSpace(version), nil
	}
	return "", fmt.Errorf("%w: image file %s: the file name must contain exactly one version X.Y.Z (the build id nvos-X.Y.Z the switch reports)", errImage, hw.QuoteShort(name))
}

var buildVersion = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// checkImageFile refuses a local image that is not an NVOS image: smaller
// than platform.MinSystemImageSize.
func checkImageFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %v", errImage, err)
	}
	if info.Size() < platform.MinSystemImageSize {
		return fmt.Errorf("%w: image file %s has %d bytes; an NVOS image has at least %d",
			errImage, hw.QuoteShort(filepath.Base(path)), info.Size(), platform.MinSystemImageSize)
	}
	return nil
}

// directImage resolves UpdateSwitchSystemImage's image: local_file_path
// confined to firmware_dir, a regular file of at least 1 KiB, staged as
// image_filename (its own base name when empty).
func (m *rackManager) directImage(req *rmspb.UpdateSwitchSystemImageRequest) (imageSource, error) {
	local := strings.TrimSpace(req.GetLocalFilePath())
	if local == "" {
		return imageSource{}, fmt.Errorf("%w: local_file_path is required", errImage)
	}
	path, err := firmwareFile(m.deps.FirmwareDir, local)
	if err != nil {
		return imageSource{}, fmt.Errorf("%w: local_file_path: %v", errImage, err)
	}
	name := strings.TrimSpace(req.GetImageFilename())
	if name == "" {
		name = filepath.Base(path)
	}
	if !platform.ValidImageName(name) {
		return imageSource{}, fmt.Errorf("%w: image_filename %s: only [A-Za-z0-9._-], no leading dot", errImage, hw.QuoteShort(name))
	}
	target, err := imageTarget(name, "")
	if err != nil {
		return imageSource{}, err
	}
	if err := checkImageFile(path); err != nil {
		return imageSource{}, err
	}
	return imageSource{path: path, name: name, target: target}, nil
}

// UpdateSwitchSystemImage installs an NVOS image from firmware_dir on
// caller-supplied switches. An image refused (outside firmware_dir,
// missing, under 1 KiB, no version in its name) fails every node in band
// and starts nothing.
func (m *rackManager) UpdateSwitchSystemImage(ctx context.Context, req *rmspb.UpdateSwitchSystemImageRequest) (*rmspb.UpdateSwitchSystemImageResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.UpdateSwitchSystemImageResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("switch system image update")
	}
	const op = "UpdateSwitchSystemImage"
	image, err := m.directImage(req)
	b := newImageBatch(op, "", nodes, image, req.GetAllowOnieRecovery())
	if err != nil {
		return &rmspb.UpdateSwitchSystemImageResponse{Response: failImageBatch(b, err)}, nil
	}
	res, err := m.startImageBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	return &rmspb.UpdateSwitchSystemImageResponse{Response: res.response, Jobs: res.jobs}, nil
}

// pickImage is the NVOS image of md for a request's software_type (""
// means prod), with a downloadable file.
func pickImage(objectID string, md manifest.Metadata, softwareType string) (manifest.SwitchSystemImage, error) {
	channel := selector.Channel(softwareType)
	var have []string
	for _, img := range md.SwitchSystemImages {
		if img.ImageFileName == "" {
			continue
		}
		if img.SoftwareType == channel {
			return img, nil
		}
		have = append(have, img.SoftwareType)
	}
	sort.Strings(have)
	msg := fmt.Sprintf("firmware object %s has no NVOS image for software_type %s", hw.QuoteShort(objectID), hw.QuoteShort(channel))
	if len(have) > 0 {
		msg += " (it has " + strings.Join(have, ", ") + ")"
	}
	return manifest.SwitchSystemImage{}, status.Error(codes.InvalidArgument, msg)
}

// ApplyStoredSwitchSystemImage installs the NVOS image of an available
// catalog object (object_id, or the default of hardware_type) on
// caller-supplied switches, and records the apply in the history when
// every switch was admitted (applystored.go). An object still downloading,
// or without an image for software_type, fails the batch in band.
func (m *rackManager) ApplyStoredSwitchSystemImage(ctx context.Context, req *rmspb.ApplyStoredSwitchSystemImageRequest) (*rmspb.ApplyStoredSwitchSystemImageResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"object_id", req.GetObjectId()}); err != nil {
		return nil, err
	}
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.ApplyStoredSwitchSystemImageResponse{Response: noNodesResponse(), ObjectId: req.GetObjectId()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("switch system image apply")
	}
	const op = "ApplyStoredSwitchSystemImage"
	obj, refused, err := m.storedObject(ctx, op, req.GetObjectId(), req.GetHardwareType(), nodes)
	if err != nil {
		return nil, err
	}
	reply := &rmspb.ApplyStoredSwitchSystemImageResponse{ObjectId: obj.ID}
	if refused != nil {
		reply.Response = refused
		return reply, nil
	}
	img, err := pickImage(obj.ID, obj.Metadata, req.GetSoftwareType())
	if err != nil { // in band, as upstream's resolve_switch_system_image failure
		reply.Response = refuseStoredBatch(op, nodes, errors.New(status.Convert(err).Message()))
		return reply, nil
	}
	reply.ImageFilename = img.ImageFileName
	source := imageSource{path: filepath.Join(obj.Dir, img.ImageFileName), name: img.ImageFileName}
	source.target, err = imageTarget(img.ImageFileName, img.Version)
	if err == nil {
		err = checkImageFile(source.path)
	}
	b := newImageBatch(op, req.GetRackId(), nodes, source, req.GetAllowOnieRecovery())
	if err != nil {
		reply.Response = failImageBatch(b, err)
		return reply, nil
	}
	res, err := m.startImageBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	m.recordStoredApply(ctx, storedApply{op: op, obj: obj, rackID: b.rackID, channel: selector.Channel(req.GetSoftwareType()),
		nodes: nodes, response: res.response, parentID: res.parentID})
	reply.Response, reply.Jobs = res.response, res.jobs
	return reply, nil
}

// ApplySwitchSystemImage installs the NVOS image of a manifest given
// inline. It answers before downloading anything: the parent and one
// child per switch are admitted at once, and each child first awaits that
// image only, downloaded once and verified into a temporary cache
// (applydownload.go), then updates its switch as
// ApplyStoredSwitchSystemImage's children do. The parent's cleanup removes
// the cache once every child is terminal. Nothing is stored.
func (m *rackManager) ApplySwitchSystemImage(ctx context.Context, req *rmspb.ApplySwitchSystemImageRequest) (*rmspb.ApplySwitchSystemImageResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.ApplySwitchSystemImageResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Catalog == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("switch system image apply")
	}
	man, err := m.deps.Catalog.Parse(req.GetConfigJson())
	if err != nil {
		return nil, catalogStatus(err)
	}
	img, err := pickImage(man.ID, man.Metadata(), req.GetSoftwareType())
	if err != nil {
		return nil, err
	}
	const op = "ApplySwitchSystemImage"
	reply := &rmspb.ApplySwitchSystemImageResponse{ObjectId: man.ID, ImageFilename: img.ImageFileName}
	source := imageSource{name: img.ImageFileName}
	source.target, err = imageTarget(img.ImageFileName, img.Version)
	b := newImageBatch(op, req.GetRackId(), nodes, source, req.GetAllowOnieRecovery())
	if err != nil {
		reply.Response = failImageBatch(b, err)
		return reply, nil
	}
	if !b.ready() { // every node refused: nothing to fetch
		reply.Response = failImageBatch(b, errors.New("no switch to update"))
		return reply, nil
	}
	staging, err := m.deps.Catalog.Prepare(man, []string{img.ImageFileName}, hw.NewSecret(req.GetAccessToken()))
	if err != nil {
		return nil, catalogStatus(err)
	}
	stageImageBatch(&b, staging)
	res, err := m.startImageBatch(ctx, b)
	if err != nil || res.parentID == "" {
		m.dropStaging(staging)
	}
	if err != nil {
		return nil, err
	}
	reply.Response, reply.Jobs = res.response, res.jobs
	return reply, nil
}

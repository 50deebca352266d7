package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/store"
)

// What ApplyStoredFirmwareObject and ApplyStoredSwitchSystemImage share,
// as upstream's handle_apply_stored_* do: the object is resolved first
// (an unknown object or default is NOT_FOUND, one of another hardware
// type FAILED_PRECONDITION, both gRPC codes, as resolve_requested_firmware
// answers them); an object that is not available yet, or has nothing for
// the request, fails the batch in band, the reply echoing object_id; and
// the apply history is written only when the whole batch was admitted
// (record_apply_if_success), naming every requested node.

// storedObject resolves the object an ApplyStored* request names. With
// refused set the object exists but cannot be applied (not available):
// the caller answers refused in band, naming obj.ID. err is a gRPC status.
func (m *rackManager) storedObject(ctx context.Context, op, objectID, hardwareType string, nodes []hw.Node) (obj catalog.Applicable, refused *rmspb.NodeBatchResponse, err error) {
	obj, err = m.deps.Catalog.ForApply(ctx, objectID, hardwareType)
	if errors.Is(err, catalog.ErrUnavailable) {
		m.log.Info().Str("operation", op).Str("object_id", obj.ID).Err(loggedErr(err)).Msg("stored firmware object not applied: not available")
		return obj, refuseStoredBatch(op, nodes, err), nil
	}
	if err != nil {
		return obj, nil, catalogStatus(err)
	}
	return obj, nil, nil
}

// refuseStoredBatch answers an ApplyStored* batch none of whose nodes
// starts, for reason: FAILURE, each node failed with it.
func refuseStoredBatch(op string, nodes []hw.Node, reason error) *rmspb.NodeBatchResponse {
	results := make([]nodeResult, len(nodes))
	for i, n := range nodes {
		results[i] = nodeResult{nodeID: n.ID, err: reason}
	}
	return batchResponse(results, func([]nodeResult, *rmspb.NodeOperationStats) string {
		return clip(fmt.Sprintf("%s: nothing started: %v", op, reason), maxMessage)
	})
}

// storedApply is an admitted ApplyStored* batch, as the history records
// it.
type storedApply struct {
	op       string
	obj      catalog.Applicable
	rackID   string // the request's, "" when it named none
	channel  string // firmware_type or software_type, normalised
	nodes    []hw.Node
	response *rmspb.NodeBatchResponse
	parentID string
}

// recordStoredApply writes the apply history of a batch whose every node
// was admitted (upstream's record_apply_if_success: the batch reply is
// SUCCESS), listing every requested node in the caller's order. A batch
// with a node refused (busy, held, not a switch, ...) is not recorded.
// The record names the request's rack, or the first node's.
func (m *rackManager) recordStoredApply(ctx context.Context, a storedApply) {
	if a.response.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(a.nodes) == 0 {
		return
	}
	rack := a.rackID
	if rack == "" {
		rack = a.nodes[0].RackID
	}
	m.recordApply(ctx, store.ApplyRecord{ObjectID: a.obj.ID, RackID: rack, NodeIDs: nodeIDs(a.nodes),
		FirmwareType: a.channel, HardwareType: a.obj.HardwareType, JobID: a.parentID, Operation: a.op})
}

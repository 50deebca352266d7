package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/spdm"
)

// BatchCollectSwitchSpdmAttestationEvidence is a synchronous read: no job,
// no lease, nothing kept. Switches are collected from concurrently, the
// components of one switch serially (hw/spdm), all within one batch
// deadline. A request that cannot be collected is INVALID_ARGUMENT before
// any I/O, in upstream's order
// (handle_batch_collect_switch_spdm_attestation_evidence): a nonce that is
// not 32 bytes, no target, a node id or a management address named twice.

// BatchCollectSwitchSpdmAttestationEvidence generates and reads fresh SPDM
// evidence of every caller-supplied switch, bound to the caller's nonce.
func (m *rackManager) BatchCollectSwitchSpdmAttestationEvidence(ctx context.Context, req *rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest) (*rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse, error) {
	if n := len(req.GetNonce()); n != spdm.NonceSize {
		return nil, status.Errorf(codes.InvalidArgument, "SPDM attestation nonce must contain exactly %d bytes, got %d", spdm.NonceSize, n)
	}
	if len(req.GetTargets()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "targets is required and must contain at least one switch")
	}
	nodes, err := m.deps.nodesFromProto(&rmspb.NodeSet{Nodes: req.GetTargets()})
	if err != nil {
		return nil, err
	}
	if err := duplicateAttestationTarget(nodes); err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("SPDM attestation")
	}
	nonce := append([]byte(nil), req.GetNonce()...)
	bctx, cancel := spdm.BatchContext(ctx, m.deps.SpdmTiming)
	defer cancel()
	targets := make([]spdm.Target, len(nodes))
	results := m.eachNode(bctx, nodes, spdmTargetCheck, func(ctx context.Context, i int, d platform.Device) error {
		sw, ok := d.(platform.SwitchSpdm)
		if !ok {
			return fmt.Errorf("%s nodes have no SPDM attestation: %w", nodes[i].Type.Name(), hw.ErrUnsupported)
		}
		targets[i] = spdm.Collect(ctx, sw, nonce, m.deps.SpdmTiming)
		return targets[i].Err
	})
	resp := &rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}
	failed := 0
	for i := range results {
		if results[i].err != nil && targets[i].Finished.IsZero() && spdm.DeadlinePassed(bctx) {
			results[i].err = fmt.Errorf("not attempted: %w", spdm.ErrDeadline)
		}
		if results[i].err != nil {
			failed++
			resp.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
		}
		resp.Results = append(resp.Results, spdmTargetToProto(results[i], targets[i]))
	}
	resp.Message = fmt.Sprintf("SPDM evidence collected from %d/%d switches", len(nodes)-failed, len(nodes))
	if failed > 0 {
		list := failureList(results, "node_id=%s: %v")
		resp.Message += "; failed: " + summarise(list, "; ")
	}
	return resp, nil
}

// spdmTargetCheck refuses, without I/O, a node that is not a switch or
// has no host endpoint; duplicates were refused with the whole request.
func spdmTargetCheck(n hw.Node) error {
	if n.Type.Kind() != hw.KindSwitch {
		return fmt.Errorf("SPDM evidence is collected from switch trays only, not %s nodes: %w", n.Type.Name(), hw.ErrUnsupported)
	}
	if spdmAddress(n) == "" {
		return errors.New("host_endpoint is required for SPDM attestation")
	}
	return nil
}

// spdmTargetToProto converts one target's outcome; evidence only for the
// components that succeeded.
func spdmTargetToProto(r nodeResult, t spdm.Target) *rmspb.SwitchSpdmAttestationTargetResult {
	finished := t.Finished
	if finished.IsZero() {
		finished = time.Now()
	}
	out := &rmspb.SwitchSpdmAttestationTargetResult{NodeId: r.nodeID, Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS,
		CollectionTimestamp: timestamppb.New(finished)}
	if r.err != nil {
		out.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
		msg := clip(r.err.Error(), maxNodeError)
		out.ErrorMessage = &msg
	}
	for _, c := range t.Components {
		pc := &rmspb.SwitchSpdmComponentResult{ComponentId: clip(c.ID, maxEchoed), Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}
		if c.Err != nil {
			pc.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
			pc.ErrorMessage = clip(c.Err.Error(), maxNodeError)
		} else {
			pc.Evidence = &rmspb.SwitchSpdmComponentEvidence{Measurements: c.Measurements, CertificateChain: c.Certificates}
		}
		out.Components = append(out.Components, pc)
	}
	return out
}

package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/spdm"
)

// BatchCollectSwitchSpdmAttestationEvidence is a synchronous read: no job,
// no lease, nothing kept. Switches are collected from concurrently, the
// components of one switch serially (hw/spdm), all within one batch
// deadline. A nonce that is not 32 bytes is refused in-band before any
// I/O, like every failure that is not a malformed id or enum.

// spdmRefused is the reply of a batch that contacts nothing.
func spdmRefused(msg string) *rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse {
	return &rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: msg}
}

// BatchCollectSwitchSpdmAttestationEvidence generates and reads fresh SPDM
// evidence of every caller-supplied switch, bound to the caller's nonce.
func (m *rackManager) BatchCollectSwitchSpdmAttestationEvidence(ctx context.Context, req *rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest) (*rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse, error) {
	if len(req.GetTargets()) == 0 {
		return spdmRefused(noNodesMessage), nil
	}
	nodes, err := m.deps.nodesFromProto(&rmspb.NodeSet{Nodes: req.GetTargets()})
	if err != nil {
		return nil, err
	}
	if n := len(req.GetNonce()); n != spdm.NonceSize {
		return spdmRefused(fmt.Sprintf("nonce must be %d bytes, got %d", spdm.NonceSize, n)), nil
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("SPDM attestation")
	}
	nonce := append([]byte(nil), req.GetNonce()...)
	bctx, cancel := spdm.BatchContext(ctx, m.deps.SpdmTiming)
	defer cancel()
	targets := make([]spdm.Target, len(nodes))
	results := m.eachNode(bctx, nodes, spdmTargetCheck(nodes), func(ctx context.Context, i int, d platform.Device) error {
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

// spdmTargetCheck refuses, without I/O, a node that is not a switch, has
// no host endpoint, or shares its host address with another target: the
// evidence read there could not be told apart, so every target naming
// that address is refused.
func spdmTargetCheck(nodes []hw.Node) func(hw.Node) error {
	owners := map[string]map[hw.Ref]bool{}
	for _, n := range nodes {
		if key := spdmAddress(n); key != "" {
			if owners[key] == nil {
				owners[key] = map[hw.Ref]bool{}
			}
			owners[key][n.Ref()] = true
		}
	}
	return func(n hw.Node) error {
		if n.Type.Kind() != hw.KindSwitch {
			return fmt.Errorf("SPDM evidence is collected from switch trays only, not %s nodes: %w", n.Type.Name(), hw.ErrUnsupported)
		}
		key := spdmAddress(n)
		if key == "" {
			return errors.New("host_endpoint is required for SPDM attestation")
		}
		if k := len(owners[key]); k > 1 {
			return fmt.Errorf("duplicate management address %s: %d targets name it", hw.QuoteShort(n.Host.Host()), k)
		}
		return nil
	}
}

// spdmAddress is the management address of a switch, lower case, or "".
func spdmAddress(n hw.Node) string {
	if n.Host == nil {
		return ""
	}
	return strings.ToLower(n.Host.Host())
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

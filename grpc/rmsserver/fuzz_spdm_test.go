package rmsserver

import (
	"bytes"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// FuzzSpdm drives BatchCollectSwitchSpdmAttestationEvidence against the
// fixture's rack: its switches are at the sink, so discovery fails
// in-band; a bad nonce, no target or a duplicate target is
// INVALID_ARGUMENT (upstream's code). The property: status set, a bounded message, SUCCESS only when
// every target and component succeeded, every failure with a bounded
// reason, evidence only on components that succeeded.

func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSpdm", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_BatchCollectSwitchSpdmAttestationEvidence_FullMethodName,
			&rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{},
			rmspb.RackManagerClient.BatchCollectSwitchSpdmAttestationEvidence,
			(*rackManager).BatchCollectSwitchSpdmAttestationEvidence),
	}})
	moreReplyProblems = append(moreReplyProblems, spdmReplyProblem)
}

func FuzzSpdm(f *testing.F) {
	rack := fuzzRackNodes(0)
	nonce := bytes.Repeat([]byte{7}, 32)
	for _, seed := range []*rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{
		{Targets: nodeSet(rack[18], rack[19], rack[0]).GetNodes(), Nonce: nonce},
		{Targets: nodeSet(rack[18], rack[18]).GetNodes(), Nonce: nonce},
		{Targets: nodeSet(rack[18]).GetNodes(), Nonce: nonce[:5]},
		{Nonce: nonce},
	} {
		data, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), data)
	}
	fuzzTarget(f, "FuzzSpdm")
}

// spdmReplyProblem is replyProblem for the family's reply.
func spdmReplyProblem(reply proto.Message) (string, bool) {
	r, ok := reply.(*rmspb.BatchCollectSwitchSpdmAttestationEvidenceResponse)
	if !ok {
		return "", false
	}
	if p := statusProblem(r.GetStatus(), r.GetMessage()); p != "" {
		return p, true
	}
	if r.GetMessage() == "" {
		return "no message", true
	}
	failed := r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS
	if failed && len(r.GetResults()) > 0 {
		failed = false // a FAILURE with results must name a failed target
		for _, t := range r.GetResults() {
			failed = failed || t.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS
		}
		if !failed {
			return "FAILURE with every target SUCCESS", true
		}
	}
	for i, t := range r.GetResults() {
		if p := spdmTargetProblem(t); p != "" {
			return fmt.Sprintf("results[%d]: %s", i, p), true
		}
		if r.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS && t.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			return fmt.Sprintf("SUCCESS with results[%d] %v", i, t.GetStatus()), true
		}
	}
	return "", true
}

// spdmTargetProblem checks one target's result.
func spdmTargetProblem(t *rmspb.SwitchSpdmAttestationTargetResult) string {
	ok := t.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS
	switch {
	case t.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE && !ok:
		return fmt.Sprintf("status %v", t.GetStatus())
	case t.GetCollectionTimestamp() == nil:
		return "no collection_timestamp"
	case ok && t.ErrorMessage != nil:
		return "SUCCESS with an error_message"
	case !ok && (t.GetErrorMessage() == "" || len(t.GetErrorMessage()) > maxNodeError):
		return fmt.Sprintf("FAILURE with a %d-byte error_message", len(t.GetErrorMessage()))
	}
	for _, c := range t.GetComponents() {
		cok := c.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS
		switch {
		case cok != (c.GetEvidence() != nil) || cok != (c.GetErrorMessage() == ""):
			return fmt.Sprintf("component %q: status %v, evidence %t, error %q", clip(c.GetComponentId(), 64), c.GetStatus(),
				c.GetEvidence() != nil, clip(c.GetErrorMessage(), 64))
		case len(c.GetErrorMessage()) > maxNodeError:
			return "component error_message too long"
		case ok && !cok:
			return "SUCCESS target with a failed component"
		}
	}
	return ""
}

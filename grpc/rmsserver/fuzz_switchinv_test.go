package rmsserver

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// The synchronous switch RPCs (ListSwitchFirmware, PushSwitchFirmware,
// ListSwitchSystemImages) on the fixture's rack: its switches are at the
// sink, so every read fails in-band, and a push never gets past the SSH
// options (the fixture's runner has no host key policy). The property:
// status set, error_message bounded and present exactly on failure, and a
// success carries a JSON document.

func FuzzSwitchInventory(f *testing.F) { fuzzTarget(f, "FuzzSwitchInventory") }

func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSwitchInventory", rpcs: []fuzzRPC{
		rpc(rmspb.RackManager_ListSwitchFirmware_FullMethodName, &rmspb.ListSwitchFirmwareRequest{},
			rmspb.RackManagerClient.ListSwitchFirmware, (*rackManager).ListSwitchFirmware),
		rpc(rmspb.RackManager_PushSwitchFirmware_FullMethodName, &rmspb.PushSwitchFirmwareRequest{},
			rmspb.RackManagerClient.PushSwitchFirmware, (*rackManager).PushSwitchFirmware),
		rpc(rmspb.RackManager_ListSwitchSystemImages_FullMethodName, &rmspb.ListSwitchSystemImagesRequest{},
			rmspb.RackManagerClient.ListSwitchSystemImages, (*rackManager).ListSwitchSystemImages),
	}})
	moreReplyProblems = append(moreReplyProblems, switchInventoryProblem)
}

// switchInventoryProblem is replyProblem for the family's replies.
func switchInventoryProblem(reply proto.Message) (string, bool) {
	switch r := reply.(type) {
	case *rmspb.ListSwitchFirmwareResponse:
		return inBandProblem(r.GetStatus(), r.GetErrorMessage(), r.GetResultJson()), true
	case *rmspb.PushSwitchFirmwareResponse:
		return inBandProblem(r.GetStatus(), r.GetErrorMessage(), r.GetResultJson()), true
	case *rmspb.ListSwitchSystemImagesResponse:
		return inBandProblem(r.GetStatus(), r.GetErrorMessage(), r.GetImagesJson()), true
	}
	return "", false
}

// inBandProblem checks a reply that answers SUCCESS with a JSON document
// or FAILURE with a reason.
func inBandProblem(st rmspb.ReturnCode, message, doc string) string {
	ok := st == rmspb.ReturnCode_RETURN_CODE_SUCCESS
	switch {
	case ok && (message != "" || !json.Valid([]byte(doc))):
		return "SUCCESS without a JSON document, or with an error message"
	case !ok && (message == "" || doc != ""):
		return "FAILURE without a reason, or with a document"
	}
	return statusProblem(st, message)
}

package rmsserver

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// Invoke runs a method's handler without a listener, as the server would:
// the reply, the in-band reason, and refusals of an unknown method or a
// request of the wrong type.
func TestInvokeRunsAHandlerWithoutAListener(t *testing.T) {
	h := NewHandlers(Deps{Version: "1.2.3", Jobs: newTestEngine(t)}, zerolog.Nop())
	ctx := context.Background()
	reply, err := h.Invoke(ctx, rmspb.RackManager_GetVersion_FullMethodName, &rmspb.GetVersionRequest{})
	if err != nil || reply.(*rmspb.GetVersionResponse).GetVersion() != "1.2.3" {
		t.Fatalf("GetVersion: %v %v", reply, err)
	}
	rctx, reason := rpcfields.WithReason(ctx)
	reply, err = h.Invoke(rctx, rmspb.RackManager_GetFirmwareJobStatus_FullMethodName, &rmspb.GetFirmwareJobStatusRequest{JobId: "nope"})
	if err != nil || reply.(*rmspb.GetFirmwareJobStatusResponse).GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || reason.Text() != "job nope not found" {
		t.Errorf("unknown job: %v %v, reason %q", reply, err, reason.Text())
	}
	if _, err := h.Invoke(ctx, "/rack_manager.RackManager/NoSuchMethod", &rmspb.GetVersionRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := h.Invoke(ctx, rmspb.RackManager_GetJobStatus_FullMethodName, &rmspb.GetVersionRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("wrong request type: %v", err)
	}
	if !h.Has(rmspb.RackManager_GetJobStatus_FullMethodName) || h.Has("/rack_manager.RackManager/NoSuchMethod") {
		t.Error("Has")
	}
}

package rmsserver

import (
	"context"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// inBandFailureWithoutMessage reports whether m (or its "response"
// submessage) says FAILURE in its status field with no message and no
// error_message to say why.
func inBandFailureWithoutMessage(m protoreflect.Message) bool {
	fields := m.Descriptor().Fields()
	if r := fields.ByName("response"); r != nil && r.Kind() == protoreflect.MessageKind && m.Has(r) {
		return inBandFailureWithoutMessage(m.Get(r).Message())
	}
	st := fields.ByName("status")
	if st == nil || st.Kind() != protoreflect.EnumKind ||
		rmspb.ReturnCode(m.Get(st).Enum()) != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		return false
	}
	for _, name := range []protoreflect.Name{"message", "error_message"} {
		if f := fields.ByName(name); f != nil && f.Kind() == protoreflect.StringKind && m.Get(f).String() != "" {
			return false
		}
	}
	return true
}

// Every RPC answers its empty request either with a gRPC error or, when
// it fails in-band, with a message saying why; GetFirmwareJobStatus {}
// says "job_id is required" like its siblings.
func TestEveryEmptyRequestFailureSaysWhy(t *testing.T) {
	s := startSimRack(t)
	to := fuzzCallee{client: s.client, v2: rmspbv2.NewRackManagerV2Client(s.conn)}
	for _, fam := range fuzzFamilies {
		for _, r := range fam.rpcs {
			ctx, cancel := context.WithTimeout(rpcContext(t), fuzzCallTimeout)
			reply, err := r.call(ctx, to, r.newReq())
			cancel()
			if err == nil && inBandFailureWithoutMessage(reply.ProtoReflect()) {
				t.Errorf("%s {}: FAILURE without a message: %v", r.method, reply)
			}
		}
	}
	resp, err := s.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorMessage() != "job_id is required" {
		t.Errorf("GetFirmwareJobStatus {} = %v, %v; want FAILURE \"job_id is required\"", resp, err)
	}
}

package replay

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// Server answers the recorded methods with their recorded replies; every
// other method is UNIMPLEMENTED. The replies are decoded once and shared:
// gRPC only reads them to encode each answer.
type Server struct {
	rmspb.UnimplementedRackManagerServer
	version *rmspb.GetVersionResponse
	job     *rmspb.GetJobStatusResponse
	power   *rmspb.BatchGetPowerStateResponse
	apply   *rmspb.ApplyStoredFirmwareObjectResponse
}

// NewServer decodes rec's replies; every method of Methods must be
// recorded.
func NewServer(rec *Recording) (*Server, error) {
	s := &Server{
		version: &rmspb.GetVersionResponse{},
		job:     &rmspb.GetJobStatusResponse{},
		power:   &rmspb.BatchGetPowerStateResponse{},
		apply:   &rmspb.ApplyStoredFirmwareObjectResponse{},
	}
	for method, into := range map[string]proto.Message{
		GetVersion: s.version, GetJobStatus: s.job, BatchGetPowerState: s.power, ApplyStoredFirmwareObject: s.apply,
	} {
		b, ok := rec.Replies[method]
		if !ok {
			return nil, fmt.Errorf("the recording has no %s reply", method)
		}
		if err := proto.Unmarshal(b, into); err != nil {
			return nil, fmt.Errorf("decode the recorded %s reply: %w", method, err)
		}
	}
	return s, nil
}

// GetVersion answers the recorded version.
func (s *Server) GetVersion(context.Context, *rmspb.GetVersionRequest) (*rmspb.GetVersionResponse, error) {
	return s.version, nil
}

// GetJobStatus answers the recorded job status, whatever the job id.
func (s *Server) GetJobStatus(context.Context, *rmspb.GetJobStatusRequest) (*rmspb.GetJobStatusResponse, error) {
	return s.job, nil
}

// BatchGetPowerState answers the recorded power states, whatever the nodes.
func (s *Server) BatchGetPowerState(context.Context, *rmspb.BatchGetPowerStateRequest) (*rmspb.BatchGetPowerStateResponse, error) {
	return s.power, nil
}

// ApplyStoredFirmwareObject answers the recorded admission (its job ids
// included) and starts nothing.
func (s *Server) ApplyStoredFirmwareObject(context.Context, *rmspb.ApplyStoredFirmwareObjectRequest) (*rmspb.ApplyStoredFirmwareObjectResponse, error) {
	return s.apply, nil
}

package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/messages"
)

// JobService is what the job-status RPCs need from the job engine
// (*actors.Engine implements it).
type JobService interface {
	// Get returns the job with id, followed by its children in attach order
	// when includeChildren is set. An unknown id gives messages.ErrJobNotFound.
	Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error)
}

// errJobsUnavailable answers job RPCs when no job engine is wired in.
var errJobsUnavailable = status.Error(codes.Unavailable, "job engine is not available")

// lookupJob reads one job: found, not found (nil, nil), or an engine error
// already mapped to a gRPC status.
func (m *rackManager) lookupJob(ctx context.Context, id string) (*messages.JobSnapshot, error) {
	if m.deps.Jobs == nil {
		return nil, errJobsUnavailable
	}
	jobs, err := m.deps.Jobs.Get(ctx, id, false)
	switch {
	case errors.Is(err, messages.ErrJobNotFound):
		return nil, nil
	case err != nil:
		return nil, engineError(err)
	}
	return &jobs[0], nil
}

func jobNotFound(id string) string { return fmt.Sprintf("job %s not found", id) }

// GetJobStatus answers the requested job first, then (on request) its
// children in attach order. Empty ids are INVALID_ARGUMENT, unknown ids
// NOT_FOUND.
func (m *rackManager) GetJobStatus(ctx context.Context, req *rmspb.GetJobStatusRequest) (*rmspb.GetJobStatusResponse, error) {
	if err := checkIDs(idField{"job_id", req.GetJobId()}); err != nil {
		return nil, err
	}
	id := strings.TrimSpace(req.GetJobId())
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "job_id is required")
	}
	if m.deps.Jobs == nil {
		return nil, errJobsUnavailable
	}
	jobs, err := m.deps.Jobs.Get(ctx, id, req.GetIncludeChildJobStates())
	switch {
	case errors.Is(err, messages.ErrJobNotFound):
		return nil, status.Error(codes.NotFound, jobNotFound(id))
	case err != nil:
		return nil, engineError(err)
	}
	out := &rmspb.GetJobStatusResponse{JobStates: make([]*rmspb.JobStatus, 0, len(jobs))}
	for i := range jobs {
		out.JobStates = append(out.JobStates, jobStatus(&jobs[i]))
	}
	return out, nil
}

func jobStatus(s *messages.JobSnapshot) *rmspb.JobStatus {
	js := &rmspb.JobStatus{
		JobId:            s.ID,
		ChildJobIds:      s.ChildIDs,
		ExecutionState:   rmspb.JobExecutionState(s.State),
		ErrorMessage:     s.ErrorMessage,
		ErrorCode:        rmspb.JobError(s.ErrorCode.Wire()),
		ResultJson:       s.ResultJSON,
		StateDescription: s.Description,
		RackId:           &s.RackID,
		NodeId:           &s.NodeID,
		CreatedAt:        timestamppb.New(s.CreatedAt),
		UpdatedAt:        timestamppb.New(s.UpdatedAt),
	}
	if s.ParentID != "" {
		js.ParentJobId = &s.ParentID
	}
	return js
}

// firmwareErrorCode maps a job error to the legacy firmware enum (lossy).
func firmwareErrorCode(e messages.JobError) rmspb.FirmwareUpdateError {
	switch e {
	case messages.ErrorInternal:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_EXCEPTION
	case messages.ErrorOther:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TASK_FAILED
	case messages.ErrorInvalidArgument, messages.ErrorFailedPrecondition, messages.ErrorClientError, messages.ErrorUnauthenticated:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE
	case messages.ErrorServerError:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_SERVER_ERROR
	case messages.ErrorTimeout:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_MONITORING_TIMEOUT
	case messages.ErrorInvalidResponse:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_INVALID_RESPONSE
	case messages.ErrorTargetNotFound:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TARGET_NOT_FOUND
	case messages.ErrorFileNotFound:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND
	case messages.ErrorUpdateInProgress:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_UPDATE_IN_PROGRESS
	default:
		return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_SUCCESS
	}
}

// GetFirmwareJobStatus reports any job (firmware, switch image, parents) in
// the legacy firmware shape. An unknown id is an in-band FAILURE.
func (m *rackManager) GetFirmwareJobStatus(ctx context.Context, req *rmspb.GetFirmwareJobStatusRequest) (*rmspb.GetFirmwareJobStatusResponse, error) {
	if err := checkIDs(idField{"job_id", req.GetJobId()}); err != nil {
		return nil, err
	}
	id := req.GetJobId()
	if strings.TrimSpace(id) == "" {
		return &rmspb.GetFirmwareJobStatusResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, JobId: id, ErrorMessage: "job_id is required"}, nil
	}
	s, err := m.lookupJob(ctx, id)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return &rmspb.GetFirmwareJobStatusResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, JobId: id, ErrorMessage: jobNotFound(id)}, nil
	}
	return &rmspb.GetFirmwareJobStatusResponse{
		Status:           rmspb.ReturnCode_RETURN_CODE_SUCCESS,
		JobId:            s.ID,
		JobState:         rmspb.FirmwareJobState(s.State),
		StateDescription: s.Description,
		RackId:           s.RackID,
		NodeId:           s.NodeID,
		ErrorCode:        firmwareErrorCode(s.ErrorCode),
		ErrorMessage:     s.ErrorMessage,
		ResultJson:       s.ResultJSON,
		CreatedAt:        timestamppb.New(s.CreatedAt),
		UpdatedAt:        timestamppb.New(s.UpdatedAt),
	}, nil
}

// switchJobStatus is the common answer of the two switch status RPCs:
// lowercase state, errors in-band in Message, the request id echoed.
type switchJobStatus struct {
	status                                rmspb.ReturnCode
	jobID, state, message, rackID, nodeID string
	errorMessage, resultJSON              string
	createdAt, updatedAt                  *timestamppb.Timestamp
}

func (m *rackManager) switchStatus(ctx context.Context, rawID string) (switchJobStatus, error) {
	if err := checkIDs(idField{"job_id", rawID}); err != nil {
		return switchJobStatus{}, err
	}
	id := strings.TrimSpace(rawID)
	if id == "" {
		return switchJobStatus{status: rmspb.ReturnCode_RETURN_CODE_FAILURE, jobID: rawID, message: "job_id is required"}, nil
	}
	s, err := m.lookupJob(ctx, id)
	if err != nil {
		return switchJobStatus{}, err
	}
	if s == nil {
		return switchJobStatus{status: rmspb.ReturnCode_RETURN_CODE_FAILURE, jobID: rawID, message: jobNotFound(id)}, nil
	}
	return switchJobStatus{
		status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, jobID: s.ID, state: s.State.String(), message: s.Description,
		rackID: s.RackID, nodeID: s.NodeID, errorMessage: s.ErrorMessage, resultJSON: s.ResultJSON,
		createdAt: timestamppb.New(s.CreatedAt), updatedAt: timestamppb.New(s.UpdatedAt),
	}, nil
}

// GetSwitchSystemImageJobStatus reports a switch system image job (parent
// or child) with a lowercase state; failures are in-band in Message.
func (m *rackManager) GetSwitchSystemImageJobStatus(ctx context.Context, req *rmspb.GetSwitchSystemImageJobStatusRequest) (*rmspb.GetSwitchSystemImageJobStatusResponse, error) {
	s, err := m.switchStatus(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return &rmspb.GetSwitchSystemImageJobStatusResponse{
		Status: s.status, JobId: s.jobID, State: s.state, Message: s.message, RackId: s.rackID, NodeId: s.nodeID,
		ErrorMessage: s.errorMessage, ResultJson: s.resultJSON, CreatedAt: s.createdAt, UpdatedAt: s.updatedAt,
	}, nil
}

// GetConfigureSwitchCertificateJobStatus reports a switch certificate job,
// with the same conventions as GetSwitchSystemImageJobStatus.
func (m *rackManager) GetConfigureSwitchCertificateJobStatus(ctx context.Context, req *rmspb.GetConfigureSwitchCertificateJobStatusRequest) (*rmspb.GetConfigureSwitchCertificateJobStatusResponse, error) {
	s, err := m.switchStatus(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return &rmspb.GetConfigureSwitchCertificateJobStatusResponse{
		Status: s.status, JobId: s.jobID, State: s.state, Message: s.message, RackId: s.rackID, NodeId: s.nodeID,
		ErrorMessage: s.errorMessage, ResultJson: s.resultJSON, CreatedAt: s.createdAt, UpdatedAt: s.updatedAt,
	}, nil
}

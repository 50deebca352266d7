package rmsserver

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/messages"
)

// jobFixture is a real job engine behind a real loopback gRPC server.
type jobFixture struct {
	engine *actors.Engine
	client rmspb.RackManagerClient
}

func newJobFixture(t *testing.T) *jobFixture {
	t.Helper()
	e := newTestEngine(t)
	conn := startTestServer(t, Deps{Jobs: e})
	return &jobFixture{engine: e, client: rmspb.NewRackManagerClient(conn)}
}

func finish(desc, doc string) messages.Workflow {
	return messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) { _ = job.Complete(desc, doc) })
}

func failWith(code messages.JobError, msg string) messages.Workflow {
	return messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Fail(messages.NewFailure(code, msg))
	})
}

// idle never reports progress: its job stays Queued until the engine closes.
var idle = messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
	<-ctx.Done()
	_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
})

func (f *jobFixture) create(t *testing.T, spec messages.JobSpec, wf messages.Workflow) messages.JobSnapshot {
	t.Helper()
	s, err := f.engine.Create(rpcContext(t), spec, wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *jobFixture) wait(t *testing.T, ids ...string) {
	t.Helper()
	if err := f.engine.Wait(waitContext(t), ids...); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || st.Message() != msg {
		t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), code, msg)
	}
}

func TestGetJobStatusRejectsEmptyJobID(t *testing.T) {
	f := newJobFixture(t)
	for _, id := range []string{"", " "} {
		_, err := f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: id})
		wantCode(t, err, codes.InvalidArgument, "job_id is required")
	}
}

func TestGetJobStatusUnknownJobIsNotFound(t *testing.T) {
	f := newJobFixture(t)
	_, err := f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: "nope"})
	wantCode(t, err, codes.NotFound, "job nope not found")
}

func TestGetJobStatusWithoutJobEngineIsUnavailable(t *testing.T) {
	client := rmspb.NewRackManagerClient(startTestServer(t, Deps{}))
	_, err := client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: "x"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v", err)
	}
}

func TestGetJobStatusReturnsParentOnlyByDefaultAndChildrenWhenRequested(t *testing.T) {
	f := newJobFixture(t)
	rep, err := f.engine.CreateBatch(rpcContext(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, []messages.BatchTarget{
		{RackID: "rack-1", NodeID: "c-01", Workflow: finish("Completed", `{"status":"completed"}`)},
		{RackID: "rack-1", NodeID: "c-02", Workflow: idle},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done, queued := rep.Admitted[0], rep.Admitted[1]
	f.wait(t, done.ID)

	res, err := f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: rep.Parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.JobStates) != 1 {
		t.Fatalf("%d states", len(res.JobStates))
	}
	p := res.JobStates[0]
	if p.JobId != rep.Parent.ID || p.ParentJobId != nil || strings.Join(p.ChildJobIds, ",") != done.ID+","+queued.ID ||
		p.ExecutionState != rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING || p.GetNodeId() != "" || p.NodeId == nil ||
		p.StateDescription != "Batch firmware update in progress (1/2 complete, 1 queued)" {
		t.Fatalf("parent %v", p)
	}

	res, err = f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: rep.Parent.ID, IncludeChildJobStates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.JobStates) != 3 || res.JobStates[1].JobId != done.ID || res.JobStates[2].JobId != queued.ID {
		t.Fatalf("states %v", res.JobStates)
	}
	c1, c2 := res.JobStates[1], res.JobStates[2]
	if c1.GetParentJobId() != rep.Parent.ID || c2.GetParentJobId() != rep.Parent.ID {
		t.Fatal("children do not carry parent_job_id")
	}
	if c1.ExecutionState != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || c1.ErrorCode != rmspb.JobError_JOB_ERROR_UNSPECIFIED ||
		c1.ResultJson != `{"status":"completed"}` || c1.GetRackId() != "rack-1" || c1.GetNodeId() != "c-01" {
		t.Fatalf("completed child %v", c1)
	}
	if c2.ExecutionState != rmspb.JobExecutionState_JOB_EXECUTION_STATE_QUEUED || c2.ResultJson != "" || c2.ErrorMessage != "" {
		t.Fatalf("queued child %v", c2)
	}

	res, err = f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: done.ID})
	if err != nil || res.JobStates[0].GetParentJobId() != rep.Parent.ID {
		t.Fatalf("child lookup %v %v", res, err)
	}
}

func TestGetJobStatusMapsFailedJob(t *testing.T) {
	f := newJobFixture(t)
	s := f.create(t, messages.JobSpec{RackID: "r", NodeID: "n"}, failWith(messages.ErrorTimeout, "poll deadline passed"))
	f.wait(t, s.ID)
	res, err := f.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: " " + s.ID + " "})
	if err != nil {
		t.Fatal(err)
	}
	js := res.JobStates[0]
	if js.ExecutionState != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || js.ErrorCode != rmspb.JobError_JOB_ERROR_TIMEOUT ||
		js.ErrorMessage != "poll deadline passed" || js.StateDescription != "Failed" ||
		js.ResultJson != `{"status":"failed","error_code":"Timeout","error_message":"poll deadline passed"}` {
		t.Fatalf("status %v", js)
	}
	if js.CreatedAt.AsTime().Unix() != s.CreatedAt.Unix() || js.UpdatedAt.AsTime().Before(js.CreatedAt.AsTime()) {
		t.Fatalf("timestamps %v %v", js.CreatedAt, js.UpdatedAt)
	}
}

func TestGetFirmwareJobStatusNotFoundIsInBandFailure(t *testing.T) {
	f := newJobFixture(t)
	for id, want := range map[string]string{"missing": "job missing not found", "": "job_id is required", " ": "job_id is required"} {
		res, err := f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: id})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != rmspb.ReturnCode_RETURN_CODE_FAILURE || res.ErrorMessage != want {
			t.Fatalf("response %v, want error_message %q", res, want)
		}
	}
}

func TestFirmwareJobStatusBridgesSwitchImageJobs(t *testing.T) {
	f := newJobFixture(t)
	s := f.create(t, messages.JobSpec{Type: messages.TypeSwitchSystemImageUpdate, RackID: "r", NodeID: "sw-01"}, failWith(messages.ErrorOther, "image install failed"))
	ok := f.create(t, messages.JobSpec{RackID: "r", NodeID: "c-01"}, finish("Completed", "{}"))
	f.wait(t, s.ID, ok.ID)
	res, err := f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != rmspb.ReturnCode_RETURN_CODE_SUCCESS || res.JobState != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED ||
		res.ErrorCode != rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TASK_FAILED || res.ErrorMessage != "image install failed" ||
		res.NodeId != "sw-01" || res.JobId != s.ID {
		t.Fatalf("response %v", res)
	}
	res, err = f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: ok.ID})
	if err != nil || res.Status != rmspb.ReturnCode_RETURN_CODE_SUCCESS || res.JobState != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED ||
		res.ErrorCode != rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_SUCCESS || res.ResultJson != "{}" {
		t.Fatalf("response %v %v", res, err)
	}
}

func TestFirmwareErrorCodeMappingIsLossy(t *testing.T) {
	cases := map[messages.JobError]rmspb.FirmwareUpdateError{
		messages.ErrorFailedPrecondition: rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
		messages.ErrorUnauthenticated:    rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE,
		messages.ErrorInternal:           rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_EXCEPTION,
		messages.ErrorTimeout:            rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_MONITORING_TIMEOUT,
		messages.ErrorUpdateInProgress:   rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_UPDATE_IN_PROGRESS,
	}
	for in, want := range cases {
		if got := firmwareErrorCode(in); got != want {
			t.Errorf("%v -> %v, want %v", in, got, want)
		}
	}
}

type switchStatusRPC func(ctx context.Context, id string) (code rmspb.ReturnCode, jobID, state, msg, rack, node string, err error)

func switchRPCs(c rmspb.RackManagerClient) map[string]switchStatusRPC {
	return map[string]switchStatusRPC{
		"GetSwitchSystemImageJobStatus": func(ctx context.Context, id string) (rmspb.ReturnCode, string, string, string, string, string, error) {
			r, err := c.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: id})
			return r.GetStatus(), r.GetJobId(), r.GetState(), r.GetMessage(), r.GetRackId(), r.GetNodeId(), err
		},
		"GetConfigureSwitchCertificateJobStatus": func(ctx context.Context, id string) (rmspb.ReturnCode, string, string, string, string, string, error) {
			r, err := c.GetConfigureSwitchCertificateJobStatus(ctx, &rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: id})
			return r.GetStatus(), r.GetJobId(), r.GetState(), r.GetMessage(), r.GetRackId(), r.GetNodeId(), err
		},
	}
}

func TestSwitchJobStatusReturnsKnownJobs(t *testing.T) {
	f := newJobFixture(t)
	rep, err := f.engine.CreateBatch(rpcContext(t), messages.JobSpec{Type: messages.TypeSwitchSystemImageUpdate}, []messages.BatchTarget{
		{RackID: "rack-9", NodeID: "sw-01", Workflow: finish("Completed", "")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, rep.Parent.ID)
	for name, rpc := range switchRPCs(f.client) {
		code, jobID, state, msg, rack, node, err := rpc(rpcContext(t), rep.Admitted[0].ID)
		if err != nil || code != rmspb.ReturnCode_RETURN_CODE_SUCCESS || jobID != rep.Admitted[0].ID || state != "completed" ||
			msg != "Completed" || rack != "rack-9" || node != "sw-01" {
			t.Fatalf("%s child: %v %s %s %q %s %s %v", name, code, jobID, state, msg, rack, node, err)
		}
		code, _, state, msg, _, node, err = rpc(rpcContext(t), rep.Parent.ID)
		if err != nil || code != rmspb.ReturnCode_RETURN_CODE_SUCCESS || node != "" || state != "completed" ||
			msg != "All 1 switch system image updates completed successfully" {
			t.Fatalf("%s parent: %v %s %q %q %v", name, code, state, msg, node, err)
		}
	}
}

func TestSwitchJobStatusFailsGracefully(t *testing.T) {
	f := newJobFixture(t)
	for name, rpc := range switchRPCs(f.client) {
		code, jobID, _, msg, _, _, err := rpc(rpcContext(t), "ghost")
		if err != nil || code != rmspb.ReturnCode_RETURN_CODE_FAILURE || msg != "job ghost not found" || jobID != "ghost" {
			t.Fatalf("%s unknown: %v %q %q %v", name, code, jobID, msg, err)
		}
		code, _, _, msg, _, _, err = rpc(rpcContext(t), "  ")
		if err != nil || code != rmspb.ReturnCode_RETURN_CODE_FAILURE || msg != "job_id is required" {
			t.Fatalf("%s empty: %v %q %v", name, code, msg, err)
		}
	}
}

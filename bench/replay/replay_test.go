package replay

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func TestServerAnswersTheSavedRecording(t *testing.T) {
	version := &rmspb.GetVersionResponse{Version: "v1.2.3"}
	job := &rmspb.GetJobStatusResponse{JobStates: []*rmspb.JobStatus{{JobId: "job-1", ChildJobIds: []string{"job-2", "job-3"}, ExecutionState: rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED}}}
	power := &rmspb.BatchGetPowerStateResponse{Response: &rmspb.NodeBatchResponse{Message: "Power state queried for 35/35 nodes"}}
	apply := &rmspb.ApplyStoredFirmwareObjectResponse{ObjectId: "DGXGB200_1.3.7"}
	var rec Recording
	for method, m := range map[string]proto.Message{GetVersion: version, GetJobStatus: job, BatchGetPowerState: power, ApplyStoredFirmwareObject: apply} {
		if err := rec.Record(method, m); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "recording.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(loaded)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gotV, _ := s.GetVersion(ctx, &rmspb.GetVersionRequest{})
	gotJ, _ := s.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: "another"})
	gotP, _ := s.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{})
	gotA, _ := s.ApplyStoredFirmwareObject(ctx, &rmspb.ApplyStoredFirmwareObjectRequest{})
	for _, c := range []struct{ got, want proto.Message }{{gotV, version}, {gotJ, job}, {gotP, power}, {gotA, apply}} {
		if !proto.Equal(c.got, c.want) {
			t.Errorf("answered %v, want the recorded %v", c.got, c.want)
		}
	}
	if _, err := s.ListRacks(ctx, &rmspb.ListRacksRequest{}); err == nil {
		t.Error("an RPC that was not recorded is answered")
	}
}

func TestNewServerRefusesAnIncompleteRecording(t *testing.T) {
	var rec Recording
	if err := rec.Record(GetVersion, &rmspb.GetVersionResponse{}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(&rec); err == nil || !strings.Contains(err.Error(), "has no") {
		t.Errorf("NewServer of a recording without three of its methods: %v", err)
	}
	rec.Replies[GetJobStatus], rec.Replies[BatchGetPowerState], rec.Replies[ApplyStoredFirmwareObject] = []byte{0xff}, nil, nil
	if _, err := NewServer(&rec); err == nil {
		t.Error("NewServer accepted a reply that does not decode")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

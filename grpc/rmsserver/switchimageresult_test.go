package rmsserver

import (
	"encoding/json"
	"testing"

	"github.com/rmsd/rmsd/hw"
)

// upstreamImageState mirrors upstream's system_image_state_to_json.
type upstreamImageState struct {
	CurrentPartition  *string `json:"current_partition"`
	NextPartition     *string `json:"next_partition"`
	CurrentBuildID    *string `json:"current_build_id"`
	NextBuildID       *string `json:"next_build_id"`
	Partition1BuildID *string `json:"partition1_build_id"`
	Partition2BuildID *string `json:"partition2_build_id"`
}

// upstreamImageResult mirrors the result_json of upstream's
// run_switch_system_image_job (build_result_json), as a client written
// against upstream reads it.
type upstreamImageResult struct {
	RackID                  string              `json:"rack_id"`
	NodeID                  string              `json:"node_id"`
	ImageFilename           string              `json:"image_filename"`
	TargetBuildID           string              `json:"target_build_id"`
	Status                  string              `json:"status"`
	ImageVisibleBeforeStage *bool               `json:"image_visible_before_stage"`
	ImageVisibleAfterStage  *bool               `json:"image_visible_after_stage"`
	ImageSizeBytes          *int64              `json:"image_size_bytes"`
	InstallJobID            *string             `json:"install_job_id"`
	Before                  *upstreamImageState `json:"before"`
	After                   *upstreamImageState `json:"after"`
	TimingSummary           *struct {
		Stages []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"stages"`
	} `json:"timing_summary"`
}

func TestSwitchImageResultCarriesUpstreamsKeys(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	resp := f.updateImage(t, file, sw)
	if len(resp.GetJobs()) != 1 {
		t.Fatalf("reply %v", resp)
	}
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	var got upstreamImageResult
	if err := json.Unmarshal([]byte(st.GetResultJson()), &got); err != nil {
		t.Fatalf("result_json %s: %v", st.GetResultJson(), err)
	}
	const target = "nvos-25.11.1042"
	if st.GetState() != "completed" || st.GetMessage() != "Completed" || got.Status != "success" ||
		got.RackID != sw.RackID || got.NodeID != sw.ID || got.ImageFilename != file || got.TargetBuildID != target {
		t.Fatalf("%s %q: %s", st.GetState(), st.GetMessage(), st.GetResultJson())
	}
	if got.ImageSizeBytes == nil || *got.ImageSizeBytes != 4096 || got.InstallJobID == nil || *got.InstallJobID == "" ||
		got.ImageVisibleBeforeStage == nil || *got.ImageVisibleBeforeStage || got.ImageVisibleAfterStage == nil || !*got.ImageVisibleAfterStage {
		t.Errorf("size, install job, visibility: %s", st.GetResultJson())
	}
	if got.Before == nil || got.Before.CurrentBuildID == nil || *got.Before.CurrentBuildID != olderBuild ||
		got.After == nil || got.After.CurrentBuildID == nil || *got.After.CurrentBuildID != target || *got.After.NextBuildID != target {
		t.Errorf("before/after: %s", st.GetResultJson())
	}
	if got.TimingSummary == nil || len(got.TimingSummary.Stages) != 6 || got.TimingSummary.Stages[5].Name != "wait_for_target_steady_state" ||
		got.TimingSummary.Stages[5].Status != "completed" {
		t.Errorf("timing_summary: %s", st.GetResultJson())
	}
	// rmsd's own keys stay beside upstream's.
	if res := parseImageResult(t, st.GetResultJson()); res.TargetBuild != target || len(res.Stages) != 6 {
		t.Errorf("rmsd's keys: %s", st.GetResultJson())
	}
}

// A switch already at the target: upstream's "Completed" with status
// already_up_to_date, the state read, no after.
func TestSwitchImageUpToDateReadsAsUpstreams(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	file := f.stageImageFile(t, "nvos-amd64-25.02.2553.bin", 2048)
	resp := f.updateImage(t, file, sw)
	if len(resp.GetJobs()) != 1 {
		t.Fatalf("reply %v", resp)
	}
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	var got upstreamImageResult
	if err := json.Unmarshal([]byte(st.GetResultJson()), &got); err != nil {
		t.Fatalf("result_json %s: %v", st.GetResultJson(), err)
	}
	if st.GetState() != "completed" || st.GetMessage() != "Completed" || got.Status != "already_up_to_date" ||
		got.Before == nil || got.Before.CurrentBuildID == nil || *got.Before.CurrentBuildID != "nvos-25.02.2553" || got.After != nil ||
		got.InstallJobID != nil || got.TimingSummary == nil {
		t.Fatalf("%s %q: %s", st.GetState(), st.GetMessage(), st.GetResultJson())
	}
}

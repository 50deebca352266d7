package switchimage

import (
	"os"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/timeline"
)

// completedMessage is a completed job's description: upstream's
// run_switch_system_image_job completes both a finished update and a
// switch already up to date with "Completed"; result_json's status tells
// them apart.
const completedMessage = "Completed"

// upstreamStatus is result_json's status as upstream's build_result_json
// writes it: "success" for a finished update, the other words alike.
func upstreamStatus(status string) string {
	if status == statusCompleted {
		return "success"
	}
	return status
}

// imageStateDoc is upstream's system_image_state_to_json of a partition
// state (before and after in result_json).
type imageStateDoc struct {
	Current           string `json:"current"`
	Next              string `json:"next"`
	CurrentPartition  string `json:"current_partition"`
	NextPartition     string `json:"next_partition"`
	CurrentBuildID    string `json:"current_build_id"`
	NextBuildID       string `json:"next_build_id"`
	Partition1BuildID string `json:"partition1_build_id"`
	Partition2BuildID string `json:"partition2_build_id"`
}

func partitionName(n int) string {
	switch n {
	case 1:
		return "partition1"
	case 2:
		return "partition2"
	}
	return ""
}

func stateDoc(st nvue.ImageState) *imageStateDoc {
	return &imageStateDoc{Current: partitionName(st.Current), Next: partitionName(st.Next),
		CurrentPartition: partitionName(st.Current), NextPartition: partitionName(st.Next),
		CurrentBuildID: st.CurrentBuild(), NextBuildID: st.NextBuild(),
		Partition1BuildID: st.Partition1, Partition2BuildID: st.Partition2}
}

// upstreamResult holds the keys of upstream's result_json
// (run_switch_system_image_job's build_result_json) that rmsd's own keys do
// not already carry under the same name: they are written over rmsd's
// where both name one (status), and beside them otherwise.
type upstreamResult struct {
	Status                  string           `json:"status"`
	TargetBuildID           string           `json:"target_build_id"`
	ImageVisibleBeforeStage bool             `json:"image_visible_before_stage"`
	ImageVisibleAfterStage  bool             `json:"image_visible_after_stage"`
	TimingSummary           timeline.Summary `json:"timing_summary"`
	ImageSizeBytes          *int64           `json:"image_size_bytes,omitempty"`
	InstallJobID            string           `json:"install_job_id,omitempty"`
	Before                  *imageStateDoc   `json:"before,omitempty"`
	After                   *imageStateDoc   `json:"after,omitempty"`
}

// upstreamResult is the run's upstream keys for a job ending with status
// (result sets the status word and the timing summary). after is the state read last,
// given only for a finished update, as upstream.
func (r *run) upstreamResult(status string) upstreamResult {
	out := upstreamResult{TargetBuildID: r.plan.Target,
		ImageVisibleBeforeStage: r.listedBefore, ImageVisibleAfterStage: r.listedAfter, InstallJobID: r.actionID}
	if info, err := os.Stat(r.plan.File); err == nil {
		size := info.Size()
		out.ImageSizeBytes = &size
	}
	if r.before != nil {
		out.Before = stateDoc(*r.before)
	}
	if status == statusCompleted {
		out.After = stateDoc(r.state)
	}
	return out
}

package switchimage

import (
	"encoding/json"

	"github.com/rmsd/rmsd/hw/timeline"
)

// Job status words of result_json (stage statuses are timeline's).
const (
	statusCompleted = timeline.Completed
	statusFailed    = timeline.Failed
	statusCancelled = "cancelled"
	statusUpToDate  = "already_up_to_date"
)

// summary is what result_json says about the update besides its stages.
type summary struct {
	Status            string `json:"status"`
	RackID            string `json:"rack_id"`
	NodeID            string `json:"node_id"`
	ImageFile         string `json:"image_filename"`
	TargetBuild       string `json:"target_build"`
	CurrentBuild      string `json:"current_build,omitempty"`
	NextBuild         string `json:"next_build,omitempty"`
	AllowONIERecovery bool   `json:"allow_onie_recovery"`
	// ONIERecovery says what became of allow_onie_recovery: "not needed"
	// (NVOS answered), "needed but not allowed" or "performed from ONIE
	// <version>".
	ONIERecovery string `json:"onie_recovery"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// result renders result_json: the summary, then the timeline, stages never
// reached marked skipped.
func result(tl *timeline.Timeline, s summary) string {
	b, err := json.Marshal(struct {
		summary
		timeline.Summary
	}{s, tl.Close()})
	if err != nil { // unreachable: strings, numbers and bools
		return `{"status":"` + s.Status + `"}`
	}
	return string(b)
}

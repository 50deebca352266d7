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
	// upstream are upstream's keys, merged in by result.
	upstream upstreamResult
}

// result renders result_json: the summary, then the timeline, stages never
// reached marked skipped, with upstream's keys (upstreamResult) merged in.
func result(tl *timeline.Timeline, s summary) string {
	ts := tl.Close()
	b, err := json.Marshal(struct {
		summary
		timeline.Summary
	}{s, ts})
	if err != nil { // unreachable: strings, numbers and bools
		return `{"status":"` + s.Status + `"}`
	}
	up := s.upstream
	up.Status, up.TimingSummary = upstreamStatus(s.Status), ts
	u, err := json.Marshal(up)
	if err != nil { // unreachable, as above
		return string(b)
	}
	var doc, ups map[string]json.RawMessage
	if json.Unmarshal(b, &doc) != nil || json.Unmarshal(u, &ups) != nil {
		return string(b)
	}
	for k, v := range ups {
		doc[k] = v
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return string(b)
	}
	return string(out)
}

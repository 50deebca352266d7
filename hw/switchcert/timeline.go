package switchcert

import (
	"encoding/json"

	"github.com/rmsd/rmsd/hw/timeline"
)

// Job status words of result_json (stage statuses are timeline's).
const (
	statusCompleted = timeline.Completed
	statusFailed    = timeline.Failed
	statusCancelled = "cancelled"
	statusDisabled  = "already_disabled"
)

// result renders result_json: the job's own fields, then the timeline
// under timing_summary, stages never reached marked skipped.
func result(tl *timeline.Timeline, fields map[string]any) string {
	doc := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		doc[k] = v
	}
	doc["timing_summary"] = tl.Close()
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: strings, numbers, bools and stages
		return `{"status":"unknown"}`
	}
	return string(b)
}

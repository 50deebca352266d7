package coldreboot

import (
	"encoding/json"

	"github.com/rmsd/rmsd/hw/timeline"
)

// result renders the result_json document of a finished run: its status,
// rack and error, then the timeline, stages never reached marked skipped.
func result(tl *timeline.Timeline, rackID, status, errorMessage string) string {
	b, err := json.Marshal(struct {
		Status       string `json:"status"`
		RackID       string `json:"rack_id"`
		ErrorMessage string `json:"error_message,omitempty"`
		timeline.Summary
	}{status, rackID, errorMessage, tl.Close()})
	if err != nil { // unreachable: plain strings and numbers
		return `{"status":"` + status + `"}`
	}
	return string(b)
}

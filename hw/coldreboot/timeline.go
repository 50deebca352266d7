package coldreboot

import (
	"encoding/json"

	"github.com/rmsd/rmsd/hw/timeline"
)

// report is what result_json says besides the timeline.
type report struct {
	Status       string `json:"status"`
	RackID       string `json:"rack_id"`
	ErrorMessage string `json:"error_message,omitempty"`
	// Restore is what the restore step did, when it ran: "shelves
	// restored" or "could not restore shelves: <reason>".
	Restore string `json:"restore,omitempty"`
}

// result renders the result_json document of a finished run: rep, then
// the timeline, stages never reached marked skipped.
func result(tl *timeline.Timeline, rep report) string {
	b, err := json.Marshal(struct {
		report
		timeline.Summary
	}{rep, tl.Close()})
	if err != nil { // unreachable: plain strings and numbers
		return `{"status":"` + rep.Status + `"}`
	}
	return string(b)
}

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
	// LeftOut names every registered node of the rack the request did not
	// list, with what the run did with it.
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// result renders result_json for rep, naming the plan's rack and its
// left-out nodes.
func (r *run) result(tl *timeline.Timeline, rep report) string {
	rep.RackID = r.plan.RackID
	rep.LeftOut = r.leftOutReport()
	return result(tl, rep)
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

// Stage is one runbook stage as a reader of a running job sees it.
type Stage struct {
	// Name is the stage's name in result_json's timeline.
	Name string
	// Step is the runbook step it implements; a running job's description
	// reads "Rack reboot step <Step>: <Message>".
	Step    string
	Message string
}

// Stages lists the runbook's stages in order, so a view of a running
// cold reboot can place its description among them.
func Stages() []Stage {
	out := make([]Stage, len(stages))
	for i, s := range stages {
		out[i] = Stage{Name: s.name, Step: s.step, Message: s.message}
	}
	return out
}

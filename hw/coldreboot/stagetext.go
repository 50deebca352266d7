package coldreboot

import "fmt"

// description is what a running job's state_description says while s is
// under way: the rack runbook's step and what is being done.
func (s stage) description() string {
	return fmt.Sprintf("Rack reboot step %s: %s", s.step, s.message)
}

// StageDescriptions are the descriptions a cold-reboot job reports, one
// per stage of the runbook, in order. A client that shows how far a run
// is (rmsctl's "stage N/9") holds its own copy to these in a test.
func StageDescriptions() []string {
	out := make([]string, len(stages))
	for i, s := range stages {
		out[i] = s.description()
	}
	return out
}

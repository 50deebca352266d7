package console

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/rmsd/rmsd/hw/coldreboot"
	"github.com/rmsd/rmsd/messages"
)

// stage is one row of a job's stage timeline.
type stage struct {
	Name string
	Step string
	// Status is queued, running, completed, failed or skipped.
	Status   string
	Message  string
	Duration string
}

// resultStages is the timeline a finished job's result_json carries.
type resultStages struct {
	Stages []struct {
		Name       string `json:"name"`
		Step       string `json:"step"`
		Status     string `json:"status"`
		Message    string `json:"message"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"stages"`
}

// stagesOf draws a job's stage timeline: a finished job's from its
// result_json; a running cold reboot's by placing its description
// ("Rack reboot step N: ...") among the runbook's stages; a running switch
// image update's from "stage i/n"; a firmware child's from its phase.
func stagesOf(j messages.JobSnapshot) []stage {
	if j.ResultJSON != "" {
		var r resultStages
		if json.Unmarshal([]byte(j.ResultJSON), &r) == nil && len(r.Stages) > 0 {
			out := make([]stage, len(r.Stages))
			for i, s := range r.Stages {
				out[i] = stage{Name: s.Name, Step: s.Step, Status: s.Status, Message: s.Message}
				if s.DurationMS > 0 {
					out[i].Duration = strconv.FormatFloat(float64(s.DurationMS)/1000, 'f', 1, 64) + " s"
				}
			}
			return out
		}
	}
	switch {
	case j.Type == messages.TypeColdRebootSequence:
		return coldRebootStages(j)
	case strings.HasPrefix(j.Description, "Switch system image update stage "):
		return switchImageStages(j)
	case j.Type == messages.TypeNone && j.ParentID != "" || j.Type == messages.TypeFirmwareUpdate && j.NodeID != "":
		return firmwareStages(j)
	}
	return nil
}

func coldRebootStages(j messages.JobSnapshot) []stage {
	plan := coldreboot.Stages()
	current := -1
	if step, ok := strings.CutPrefix(j.Description, "Rack reboot step "); ok {
		step, _, _ = strings.Cut(step, ":")
		for i, s := range plan {
			if s.Step == step {
				current = i
			}
		}
	}
	out := make([]stage, len(plan))
	for i, s := range plan {
		out[i] = stage{Name: s.Name, Step: s.Step, Status: "queued", Message: s.Message}
		switch {
		case current < 0:
		case i < current:
			out[i].Status = "completed"
		case i == current:
			out[i].Status = runningOr(j)
		}
	}
	return out
}

// runningOr is a current stage's status: running, or failed when the job
// failed there.
func runningOr(j messages.JobSnapshot) string {
	if j.State == messages.StateFailed {
		return "failed"
	}
	return "running"
}

var stageOf = regexp.MustCompile(`stage (\d+)/(\d+): (.*)`)

func switchImageStages(j messages.JobSnapshot) []stage {
	m := stageOf.FindStringSubmatch(j.Description)
	if m == nil {
		return nil
	}
	cur, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	if n <= 0 || n > 64 || cur < 1 || cur > n {
		return nil
	}
	out := make([]stage, n)
	for i := range out {
		out[i] = stage{Name: "stage " + strconv.Itoa(i+1), Status: "queued"}
		switch {
		case i+1 < cur:
			out[i].Status = "completed"
		case i+1 == cur:
			out[i].Status, out[i].Message = runningOr(j), m[3]
		}
	}
	return out
}

// firmwarePhases are a firmware child's phases and the description that
// shows each has begun.
var firmwarePhases = []struct{ name, prefix string }{
	{"in-band NIC flash", "Flashing in-band NIC firmware"},
	{"upload", "Uploading "},
	{"device task", "Polling firmware task"},
	{"activation", "Activating firmware"},
}

func firmwareStages(j messages.JobSnapshot) []stage {
	current := -1
	for i, p := range firmwarePhases {
		if strings.HasPrefix(j.Description, p.prefix) {
			current = i
		}
	}
	if current < 0 {
		return nil
	}
	// The NIC flash is drawn only when the job has one: it runs first.
	first := min(current, 1)
	out := make([]stage, 0, len(firmwarePhases))
	for i, p := range firmwarePhases[first:] {
		i += first
		s := stage{Name: p.name, Status: "queued"}
		switch {
		case i < current:
			s.Status = "completed"
		case i == current:
			s.Status, s.Message = runningOr(j), j.Description
		}
		out = append(out, s)
	}
	return out
}

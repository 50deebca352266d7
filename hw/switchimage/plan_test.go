package switchimage

import (
	"encoding/json"
	"github.com/rmsd/rmsd/hw/timeline"
	"testing"
	"time"
)

func TestStageCountMatchesTheStages(t *testing.T) {
	if len(stages) != stageCount {
		t.Fatalf("stageCount is %d, there are %d stages", stageCount, len(stages))
	}
}

func TestTimingDefaultsAreUpstreams(t *testing.T) {
	got := Timing{SteadyWindows: []time.Duration{0, -time.Second}}.withDefaults()
	if got.ActionPollInterval != 5*time.Second || got.UninstallTimeout != 5*time.Minute || got.HandoffTimeout != 10*time.Minute ||
		got.SteadyDelay != 30*time.Second || got.SteadyInterval != 10*time.Second {
		t.Errorf("defaults %+v", got)
	}
	if len(got.SteadyWindows) != 3 || got.SteadyWindows[2] != 15*time.Minute {
		t.Errorf("windows %v, want 5, 10 and 15 min", got.SteadyWindows)
	}
	kept := Timing{SteadyWindows: []time.Duration{time.Second}}.withDefaults()
	if len(kept.SteadyWindows) != 1 {
		t.Errorf("configured windows replaced: %v", kept.SteadyWindows)
	}
}

// Stages an early end never reached are skipped; the summary leads.
func TestTimelineSkipsStagesNeverReached(t *testing.T) {
	now := time.UnixMilli(1000)
	tl := timeline.New(func() time.Time { return now }, timeline.Named("a", "b", "c"))
	tl.Begin(0, "doing a")
	now = now.Add(5 * time.Millisecond)
	tl.End(0, statusFailed, "a broke", map[string]string{"k": "v"})
	var doc struct {
		Status       string `json:"status"`
		CurrentStage string `json:"current_stage"`
		Stages       []struct {
			Name, Status, Message string
			DurationMS            int64 `json:"duration_ms"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(result(tl, summary{Status: statusFailed})), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != "failed" || doc.CurrentStage != "a" || len(doc.Stages) != 3 || doc.Stages[0].DurationMS != 5 ||
		doc.Stages[1].Status != "skipped" || doc.Stages[2].Status != "skipped" {
		t.Errorf("result %+v", doc)
	}
}

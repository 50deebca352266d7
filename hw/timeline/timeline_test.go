package timeline

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTimelineRecordsStagesAndSkipsTheUnreached(t *testing.T) {
	now := time.UnixMilli(1_000)
	tl := New(func() time.Time { return now }, []Stage{{Name: "a", Step: "1"}, {Name: "b"}, {Name: "c"}})
	tl.Begin(0, "doing a")
	now = now.Add(250 * time.Millisecond)
	tl.End(0, Completed, "a: done", map[string]string{"k": "v"})
	tl.Begin(1, "doing b")
	now = now.Add(time.Second)
	tl.End(1, Failed, "b broke", nil)
	s := tl.Close()
	if s.StartedAt != 1_000 || s.UpdatedAt != 2_250 || s.TotalDurationMS != 1_250 || s.CurrentStage != "b" {
		t.Errorf("summary %+v", s)
	}
	want := []Stage{
		{Name: "a", Step: "1", Status: Completed, Message: "a: done", StartedAt: 1_000, FinishedAt: 1_250, DurationMS: 250, Details: map[string]string{"k": "v"}},
		{Name: "b", Status: Failed, Message: "b broke", StartedAt: 1_250, FinishedAt: 2_250, DurationMS: 1_000},
		{Name: "c", Status: Skipped},
	}
	got, _ := json.Marshal(s.Stages)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("stages\n got %s\nwant %s", got, exp)
	}
}

func TestSkipSaysWhy(t *testing.T) {
	tl := New(time.Now, Named("x", "y"))
	tl.Skip(1, "not requested")
	if s := tl.Close(); s.Stages[1].Status != Skipped || s.Stages[1].Message != "not requested" || s.Stages[0].Status != Skipped {
		t.Errorf("stages %+v", s.Stages)
	}
}

package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
)

// logLines collects JSON log lines.
type logLines struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (l *logLines) Write(p []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(p), &m); err == nil {
		l.mu.Lock()
		l.lines = append(l.lines, m)
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *logLines) with(msg, jobID string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, m := range l.lines {
		if m["message"] == msg && m["job_id"] == jobID {
			out = append(out, m)
		}
	}
	return out
}

func TestLifecycleLogChokepoints(t *testing.T) {
	logs := &logLines{}
	e, _ := newEngine(t, Options{Logger: zerolog.New(logs).Level(zerolog.DebugLevel)})
	steps := make(chan struct{})
	wf := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		job.Progress("Uploading")
		job.Progress("Flashing")
		<-steps
		_ = job.Complete("Completed", "")
	})
	ok := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	close(steps)
	bad := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: ""}, fails(messages.ErrorOther, "disk full"))
	gone := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "m"}, messages.WorkflowFunc(func(context.Context, messages.Reporter) {}))
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(completes("Completed", ""), "r", "c"))
	waitTerminal(t, e, ok.ID, bad.ID, gone.ID, rep.Parent.ID)

	created := logs.with("job created", ok.ID)
	if len(created) != 1 || created[0]["parent_job_id"] != "None" || created[0]["rack_id"] != "r" ||
		created[0]["node_id"] != "n" || created[0]["description"] != "Queued" {
		t.Fatalf("job created lines %v", created)
	}
	if len(logs.with("job created", bad.ID)) != 1 {
		t.Fatal("empty node job not logged as created")
	}
	if c := logs.with("job created", rep.Admitted[0].ID); len(c) != 1 || c[0]["parent_job_id"] != rep.Parent.ID {
		t.Fatalf("child created %v", c)
	}
	if p := logs.with("job created", rep.Parent.ID); len(p) != 1 || p[0]["parent_job_id"] != "None" {
		t.Fatalf("parent created %v", p)
	}
	if s := logs.with("job started", ok.ID); len(s) != 1 || s[0]["description"] != "Uploading" {
		t.Fatalf("job started %v", s)
	}
	if p := logs.with("job progress", ok.ID); len(p) != 1 || p[0]["description"] != "Flashing" {
		t.Fatalf("job progress %v", p)
	}
	if c := logs.with("job completed", ok.ID); len(c) != 1 || c[0]["description"] != "Completed" {
		t.Fatalf("job completed %v", c)
	}
	if f := logs.with("job failed", bad.ID); len(f) != 1 || f[0]["description"] != "disk full" {
		t.Fatalf("job failed %v", f)
	}
	if f := logs.with("job failed", gone.ID); len(f) != 1 || !strings.Contains(f[0]["description"].(string), "before recording a terminal state") {
		t.Fatalf("abandoned job %v", f)
	}
}

func TestConcurrentAccessEachJobOnItsOwnNode(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var wg sync.WaitGroup
	ids := make([]string, 10)
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := e.Create(context.Background(), messages.JobSpec{RackID: "r", NodeID: string(rune('a' + i))}, completes("Completed", ""), nil)
			if err != nil {
				errs <- err
				return
			}
			ids[i] = s.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitTerminal(t, e, ids...)
	for _, id := range ids {
		if s := mustGet(t, e, id); s.State != messages.StateCompleted {
			t.Fatalf("job %+v", s)
		}
	}
}

func TestEvictingOldTerminalJobPreservesNewActiveNodeEntry(t *testing.T) {
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute})
	old := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, old.ID)
	g := newGate()
	active := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	clk.Advance(time.Minute)
	if n, _ := e.Reap(testCtx(t)); n != 1 {
		t.Fatalf("evicted %d", n)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	if ref := refusal(t, err, messages.ErrNodeBusy); !strings.Contains(ref.Message, active.ID) {
		t.Fatalf("busy message %q", ref.Message)
	}
	close(g.release)
	waitTerminal(t, e, active.ID)
}

func TestWorkflowTypeIsStoredOnLeafAndParentSnapshots(t *testing.T) {
	e, _ := newEngine(t, Options{})
	leaf := mustCreate(t, e, messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"}, completes("Completed", ""))
	rep := mustBatch(t, e, messages.TypeSwitchCertificate, nil)
	if leaf.Type != messages.TypeColdRebootSequence || mustGet(t, e, rep.Parent.ID).Type != messages.TypeSwitchCertificate {
		t.Fatalf("types %v %v", leaf.Type, rep.Parent.Type)
	}
	waitTerminal(t, e, leaf.ID)
}

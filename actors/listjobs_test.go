package actors

import (
	"context"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// TestListJobsFiltersAndPagesNewestFirst: the registry lists the jobs it
// tracks, finished ones included, by state, type, rack and creation time,
// newest first, a page at a time.
func TestListJobsFiltersAndPagesNewestFirst(t *testing.T) {
	e, clk := newEngine(t, Options{})
	g := newGate()
	done := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) { _ = job.Complete("done", "") })
	t0 := clk.Now()
	fw := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "rack-1", NodeID: "n1"}, done)
	waitTerminal(t, e, fw.ID)
	clk.Advance(time.Minute)
	pw := mustCreate(t, e, messages.JobSpec{Type: messages.TypeSwitchSystemPasswordUpdate, RackID: "rack-1", NodeID: "n2"}, g)
	clk.Advance(time.Minute)
	other := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "rack-2", NodeID: "n3"}, g)
	g.waitStarted(t, 2)

	ids := func(q messages.ListJobs) []string {
		t.Helper()
		rep, err := e.List(testCtx(t), q)
		if err != nil {
			t.Fatalf("list %+v: %v", q, err)
		}
		var out []string
		for _, j := range rep.Jobs {
			out = append(out, j.ID)
		}
		return out
	}
	tests := []struct {
		name string
		q    messages.ListJobs
		want []string
	}{
		{"all", messages.ListJobs{}, []string{other.ID, pw.ID, fw.ID}},
		{"completed", messages.ListJobs{State: messages.StateCompleted}, []string{fw.ID}},
		{"type", messages.ListJobs{Type: "firmware_update"}, []string{other.ID, fw.ID}},
		{"rack", messages.ListJobs{RackID: "rack-1"}, []string{pw.ID, fw.ID}},
		{"since", messages.ListJobs{Since: t0.Add(time.Minute)}, []string{other.ID, pw.ID}},
		{"none", messages.ListJobs{Type: "cold_reboot_sequence"}, nil},
	}
	for _, tt := range tests {
		if got := ids(tt.q); !equalIDs(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}

	first, err := e.List(testCtx(t), messages.ListJobs{Limit: 2})
	if err != nil || len(first.Jobs) != 2 || first.Next.IsZero() {
		t.Fatalf("first page %+v, %v; want two jobs and a cursor", first, err)
	}
	second, err := e.List(testCtx(t), messages.ListJobs{Limit: 2, After: first.Next})
	if err != nil || len(second.Jobs) != 1 || second.Jobs[0].ID != fw.ID || !second.Next.IsZero() {
		t.Errorf("second page %+v, %v; want the oldest job and no cursor", second, err)
	}
	close(g.release)
	waitTerminal(t, e, pw.ID, other.ID)
}

func equalIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

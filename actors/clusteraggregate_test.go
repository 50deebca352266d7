package actors

import (
	"context"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

// AggregateBatch over a batch's children shows exactly what the registry
// shows for the batch's own parent: while children run, and once they are
// terminal (one failed, one already up to date), for each job type shape
// of the failure document.
func TestAggregateBatchShowsWhatTheRegistryShows(t *testing.T) {
	for _, typ := range []messages.JobType{messages.TypeFirmwareUpdate, messages.TypeSwitchSystemPasswordUpdate} {
		t.Run(typ.String(), func(t *testing.T) {
			e, _ := newEngine(t, Options{})
			g := newGate()
			upToDate := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
				_ = job.Complete("Completed", `{"status":"already_up_to_date"}`)
			})
			failing := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
				_ = job.Fail(messages.NewFailure(messages.ErrorTimeout, "switch did not answer"))
			})
			ts := targets(g, "rack-01", "node-01", "rack-01", "node-02")
			ts = append(ts, targets(upToDate, "rack-01", "node-03")...)
			ts = append(ts, targets(failing, "rack-01", "node-04")...)
			rep := mustBatch(t, e, typ, ts)
			g.waitStarted(t, 2)
			same := func(when string) {
				jobs, err := e.Get(testCtx(t), rep.Parent.ID, true)
				if err != nil {
					t.Fatal(err)
				}
				want := jobs[0]
				got := AggregateBatch(messages.JobSnapshot{ID: want.ID, CreatedAt: want.CreatedAt}, typ, jobs[1:], 0)
				if got.State != want.State || got.Description != want.Description || got.ErrorCode != want.ErrorCode ||
					got.ErrorMessage != want.ErrorMessage || got.ResultJSON != want.ResultJSON {
					t.Errorf("%s: aggregated %+v, registry %+v", when, got, want)
				}
			}
			waitChildren(t, e, rep.Parent.ID, 2) // the up-to-date and the failing child
			same("running")
			close(g.release)
			waitTerminal(t, e, rep.Parent.ID)
			same("terminal")
		})
	}
}

// waitChildren waits until the parent's last n children are terminal.
func waitChildren(t *testing.T, e *Engine, parent string, n int) {
	t.Helper()
	jobs, err := e.Get(testCtx(t), parent, false)
	if err != nil {
		t.Fatal(err)
	}
	kids := jobs[0].ChildIDs
	if err := e.Wait(testCtx(t), kids[len(kids)-n:]...); err != nil {
		t.Fatal(err)
	}
}

package switchadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/messages"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSettleWatchEndsTheSDNWaitAsUpstreamDoes(t *testing.T) {
	progress := nvue.ClusterApp{Status: "not ok", Reason: "FACTORY RESET IN PROGRESS", ControlPlane: "CONTROL_PLANE_STATE_STOPPED"}
	unconfigured := nvue.ClusterApp{Status: "ok", ControlPlane: planeUnconfigured}
	configured := nvue.ClusterApp{Status: "ok", ControlPlane: "CONTROL_PLANE_STATE_CONFIGURED"}
	absent := fmt.Errorf("read: %w", nvue.ErrNotFound)
	type reading struct {
		app nvue.ClusterApp
		err error
	}
	for _, c := range []struct {
		name     string
		readings []reading
		doneAt   int // index of the reading that ends the wait, -1 for none
	}{
		{"progress then unconfigured", []reading{{app: progress}, {app: progress}, {app: unconfigured}}, 2},
		{"never seen in progress: three in a row", []reading{{app: unconfigured}, {app: unconfigured}, {app: unconfigured}}, 2},
		{"a configured reading restarts the count", []reading{{app: unconfigured}, {app: unconfigured}, {app: configured},
			{app: unconfigured}, {app: unconfigured}}, -1},
		{"absent after progress", []reading{{app: progress}, {err: absent}}, 1},
		{"absent without progress", []reading{{err: absent}, {err: absent}}, -1},
		{"read errors never end it", []reading{{err: nvue.ErrTransport}, {err: nvue.ErrServer}}, -1},
	} {
		var w settleWatch
		got := -1
		for i, r := range c.readings {
			if w.observe(r.app, r.err) {
				got = i
				break
			}
		}
		if got != c.doneAt {
			t.Errorf("%s: done at reading %d, want %d", c.name, got, c.doneAt)
		}
	}
}

// reporter records what a workflow reports.
type reporter struct {
	desc    []string
	done    string
	result  string
	failure *messages.Failure
}

func (r *reporter) ID() string       { return "job" }
func (r *reporter) ParentID() string { return "" }
func (r *reporter) Progress(d string) bool {
	r.desc = append(r.desc, d)
	return true
}
func (r *reporter) Complete(d, res string) error  { r.done, r.result = d, res; return nil }
func (r *reporter) Fail(f messages.Failure) error { r.failure = &f; return nil }

func TestAFailureNeverShowsTheRunsSecrets(t *testing.T) {
	pw := hw.NewSecret(`s3cret"pass`)
	job := &reporter{}
	r := &run{node: hw.Node{ID: "sw1", RackID: "r1"}, job: job, secrets: []hw.Secret{pw}, phase: "rotate"}
	echoed := errors.New(`switch said: bad value s3cret"pass (` + "czNjcmV0InBhc3M=" + `)`)
	r.fail(context.Background(), fmt.Errorf("%w: %w", nvue.ErrRequest, echoed))
	f := job.failure
	if f == nil || f.Code != messages.ErrorInvalidArgument || f.Description != "Failed during rotate" {
		t.Fatalf("failure = %+v", f)
	}
	for _, s := range []string{f.Message, f.ResultJSON, f.Description} {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "czNjcmV0InBhc3M=") {
			t.Errorf("a secret shows in %q", s)
		}
	}
	if !strings.Contains(f.ResultJSON, `"phase":"rotate"`) || !strings.Contains(f.ResultJSON, `"node_id":"sw1"`) {
		t.Errorf("result %s", f.ResultJSON)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want messages.JobError
	}{
		{fmt.Errorf("x: %w", errNotPrimary), messages.ErrorFailedPrecondition},
		{fmt.Errorf("x: %w", errCredentials), messages.ErrorUnauthenticated},
		{fmt.Errorf("x: %w", nvue.ErrUnauthorized), messages.ErrorUnauthenticated},
		{fmt.Errorf("x: %w", errWaitTimeout), messages.ErrorTimeout},
		{fmt.Errorf("x: %w", nvue.ErrTransport), messages.ErrorClientError},
		{fmt.Errorf("x: %w", hw.ErrUnsupported), messages.ErrorInvalidArgument},
		{errors.New("other"), messages.ErrorOther},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestEveryStopsOnDoneTimeoutOrCancel(t *testing.T) {
	calls := 0
	err := every(context.Background(), time.Millisecond, time.Minute, func() (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("done: %v after %d calls", err, calls)
	}
	err = every(context.Background(), time.Millisecond, 20*time.Millisecond, func() (bool, error) { return false, errors.New("still down") })
	if !errors.Is(err, errWaitTimeout) || !strings.Contains(err.Error(), "still down") {
		t.Fatalf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = every(ctx, time.Millisecond, time.Minute, func() (bool, error) { cancel(); return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
}

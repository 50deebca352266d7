package spdm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSwitch answers from tables: ok components succeed at the first
// read, the others end with their error.
type fakeSwitch struct {
	ids      []string
	discover error
	status   map[string]error // component -> error of SpdmGenerationDone
	running  map[string]bool  // component -> never finishes
	calls    []string
}

func (f *fakeSwitch) SpdmComponents(context.Context) ([]string, error) { return f.ids, f.discover }

func (f *fakeSwitch) StartSpdmGeneration(_ context.Context, c string, _ []byte) (string, error) {
	f.calls = append(f.calls, c)
	return c, nil
}

func (f *fakeSwitch) SpdmGenerationDone(_ context.Context, c string) (bool, error) {
	if f.running[c] {
		return false, nil
	}
	return f.status[c] == nil, f.status[c]
}

func (f *fakeSwitch) SpdmEvidence(_ context.Context, c string) ([]byte, []byte, error) {
	return []byte(`{"c":"` + c + `"}`), []byte(`[]`), nil
}

var fast = Timing{PollInterval: time.Millisecond, GenerationTimeout: 50 * time.Millisecond}

// A malformed status, a transport error and a generation that never ends
// each fail their component only; the others keep their evidence.
func TestCollectContinuesAfterFailedComponents(t *testing.T) {
	sw := &fakeSwitch{ids: []string{"a", "b", "c", "d"},
		status: map[string]error{
			"a": errors.New("read action a: nvue: invalid response: unknown state \"weird\""),
			"b": errors.New("read action b: nvue: transport error: connection reset"),
		},
		running: map[string]bool{"c": true}}
	ctx, cancel := BatchContext(context.Background(), fast)
	defer cancel()
	got := Collect(ctx, sw, make([]byte, NonceSize), fast)
	if !got.Failed() || got.Err.Error() != "3 of 4 SPDM components failed" || got.Finished.IsZero() {
		t.Fatalf("target: %+v", got)
	}
	for i, want := range []string{"invalid response", "transport error", "timed out", ""} {
		c := got.Components[i]
		if (want == "") != (c.Err == nil) || (c.Err != nil && !strings.Contains(c.Err.Error(), want)) || c.TimedOut {
			t.Fatalf("component %s: %+v, want %q", c.ID, c, want)
		}
	}
	if string(got.Components[3].Measurements) != `{"c":"d"}` {
		t.Fatalf("evidence of d: %s", got.Components[3].Measurements)
	}
}

// A discovery that fails, or that the deadline ends, fails the target
// with no components.
func TestCollectDiscoveryFailure(t *testing.T) {
	sw := &fakeSwitch{discover: errors.New("nvue: unauthorized")}
	got := Collect(context.Background(), sw, nil, fast)
	if got.Err == nil || !strings.Contains(got.Err.Error(), "discover SPDM components: nvue: unauthorized") || len(got.Components) != 0 {
		t.Fatalf("target: %+v", got)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrDeadline)
	sw = &fakeSwitch{ids: []string{"a", "b"}}
	got = Collect(ctx, sw, nil, fast)
	for _, c := range got.Components {
		if !c.TimedOut || !errors.Is(c.Err, ErrDeadline) {
			t.Fatalf("component %+v, want not attempted", c)
		}
	}
	if len(sw.calls) != 0 {
		t.Fatalf("generations started after the deadline: %v", sw.calls)
	}
}

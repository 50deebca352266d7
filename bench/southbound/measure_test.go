package main

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestInterleavedTakesTurnsAndSumsEachSide: the sides take turns of the
// given size, the one named first beginning, a last short turn included,
// and each side's run holds all its calls and only its own time.
func TestInterleavedTakesTurnsAndSumsEachSide(t *testing.T) {
	var order []string
	call := func(name string) func(context.Context) error {
		return func(context.Context) error { order = append(order, name); return nil }
	}
	pid := os.Getpid()
	cs := []contender{{name: "a", pid: pid, call: call("a")}, {name: "b", pid: pid, call: call("b")}}
	runs, err := interleaved(context.Background(), "rack", 3, 5, 2, 1, &sims{}, cs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(order, ""), "bbaabbaaba"; got != want {
		t.Errorf("calls went %s, want %s (turns of 2, b first, a last turn of 1)", got, want)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want one per side", len(runs))
	}
	for i, r := range runs {
		if r.side != cs[i].name || r.scenario != "rack" || r.round != 3 {
			t.Errorf("run %d is %s/%s round %d, want %s/rack round 3", i, r.side, r.scenario, r.round, cs[i].name)
		}
		if r.calls() != 5 {
			t.Errorf("%s made %d calls, want 5", r.side, r.calls())
		}
		if !slices.IsSorted(r.lat) {
			t.Errorf("%s's latencies are not sorted: %v", r.side, r.lat)
		}
		var sum int64
		for _, l := range r.lat {
			sum += int64(l)
		}
		if int64(r.wall) < sum {
			t.Errorf("%s's wall %v is less than its calls' %v", r.side, r.wall, sum)
		}
	}
}

// TestInterleavedStopsAtAFailedCall: a failing side's error ends the
// measurement, named by scenario and side.
func TestInterleavedStopsAtAFailedCall(t *testing.T) {
	calls := 0
	ok := func(context.Context) error { calls++; return nil }
	broken := func(context.Context) error { return errors.New("refused") }
	pid := os.Getpid()
	_, err := interleaved(context.Background(), "site", 0, 3, 1, 0, &sims{},
		[]contender{{name: "rmsd", pid: pid, call: ok}, {name: "bare", pid: pid, call: broken}})
	if err == nil || !strings.Contains(err.Error(), "site on bare: refused") {
		t.Fatalf("err = %v, want the bare side's refusal", err)
	}
	if calls != 1 {
		t.Errorf("rmsd made %d calls, want 1 (the measurement ends at the failure)", calls)
	}
}

package actors

import (
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func TestApplyEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	created := func(id, parent, node string, st messages.JobState) messages.JobCreated {
		return messages.JobCreated{ID: id, ParentID: parent, RackID: "r", NodeID: node, State: st, Description: "Queued", At: t0}
	}
	tests := []struct {
		name    string
		events  []messages.Event
		wantErr error // of the last event
		check   func(t *testing.T, s *jobStore)
	}{
		{
			name:   "created job is queued with equal timestamps",
			events: []messages.Event{created("a", "", "n", messages.StateQueued)},
			check: func(t *testing.T, s *jobStore) {
				r := s.jobs["a"]
				if r.snap.State != messages.StateQueued || !r.snap.CreatedAt.Equal(r.snap.UpdatedAt) || r.snap.NodeID != "n" {
					t.Fatalf("%+v", r.snap)
				}
			},
		},
		{
			name:    "duplicate id never replaces a job",
			events:  []messages.Event{created("a", "", "n", messages.StateQueued), messages.JobStarted{ID: "a", Description: "x", At: t1}, created("a", "", "m", messages.StateQueued)},
			wantErr: messages.ErrDuplicateJob,
			check: func(t *testing.T, s *jobStore) {
				if s.jobs["a"].snap.NodeID != "n" || s.jobs["a"].snap.State != messages.StateRunning {
					t.Fatalf("%+v", s.jobs["a"].snap)
				}
			},
		},
		{
			name:   "queued to running is started",
			events: []messages.Event{created("a", "", "", messages.StateQueued), messages.JobStarted{ID: "a", Description: "Flashing", At: t1}},
			check: func(t *testing.T, s *jobStore) {
				r := s.jobs["a"].snap
				if r.State != messages.StateRunning || r.Description != "Flashing" || !r.UpdatedAt.Equal(t1) {
					t.Fatalf("%+v", r)
				}
			},
		},
		{
			name:    "started twice does not apply",
			events:  []messages.Event{created("a", "", "", messages.StateQueued), messages.JobStarted{ID: "a", At: t1}, messages.JobStarted{ID: "a", At: t1}},
			wantErr: errBadEvent,
		},
		{
			name:   "running to running is progress",
			events: []messages.Event{created("a", "", "", messages.StateQueued), messages.JobStarted{ID: "a", At: t1}, messages.JobProgressed{ID: "a", Description: "Polling", At: t1}},
			check: func(t *testing.T, s *jobStore) {
				if s.jobs["a"].snap.Description != "Polling" {
					t.Fatal(s.jobs["a"].snap.Description)
				}
			},
		},
		{
			name:    "progress of a queued job does not apply",
			events:  []messages.Event{created("a", "", "", messages.StateQueued), messages.JobProgressed{ID: "a", At: t1}},
			wantErr: errBadEvent,
		},
		{
			name:   "queued to completed directly",
			events: []messages.Event{created("a", "", "", messages.StateQueued), messages.JobCompleted{ID: "a", Description: "Completed", ResultJSON: "{}", At: t1}},
			check: func(t *testing.T, s *jobStore) {
				if r := s.jobs["a"].snap; r.State != messages.StateCompleted || r.ResultJSON != "{}" {
					t.Fatalf("%+v", r)
				}
			},
		},
		{
			name: "terminal state is never overwritten",
			events: []messages.Event{created("a", "", "", messages.StateQueued),
				messages.JobFailed{ID: "a", Code: messages.ErrorTimeout, Description: "Failed", Message: "slow", At: t1},
				messages.JobCompleted{ID: "a", Description: "Completed", At: t1}},
			wantErr: messages.ErrJobTerminal,
			check: func(t *testing.T, s *jobStore) {
				if r := s.jobs["a"].snap; r.State != messages.StateFailed || r.ErrorCode != messages.ErrorTimeout || r.ErrorMessage != "slow" {
					t.Fatalf("%+v", r)
				}
			},
		},
		{
			name:    "transition of unknown job",
			events:  []messages.Event{messages.JobStarted{ID: "x", At: t1}},
			wantErr: messages.ErrJobNotFound,
		},
		{
			name: "attaching a child refreshes the parent and opens it",
			events: []messages.Event{created("p", "", "", messages.StateRunning), created("c", "p", "n", messages.StateQueued),
				messages.ChildAttached{ParentID: "p", ChildID: "c", At: t1}},
			check: func(t *testing.T, s *jobStore) {
				p := s.jobs["p"].snap
				if len(p.ChildIDs) != 1 || !p.UpdatedAt.Equal(t1) {
					t.Fatalf("%+v", p)
				}
				if _, ok := s.openParents["p"]; !ok {
					t.Fatal("parent not open")
				}
			},
		},
		{
			name: "terminal parent closes",
			events: []messages.Event{created("p", "", "", messages.StateRunning), created("c", "p", "", messages.StateQueued),
				messages.ChildAttached{ParentID: "p", ChildID: "c", At: t1}, messages.JobCompleted{ID: "p", At: t1}},
			check: func(t *testing.T, s *jobStore) {
				if _, ok := s.openParents["p"]; ok {
					t.Fatal("terminal parent still open")
				}
			},
		},
		{
			name: "a child cannot accept children",
			events: []messages.Event{created("p", "", "", messages.StateRunning), created("c", "p", "", messages.StateQueued),
				messages.ChildAttached{ParentID: "p", ChildID: "c", At: t1}, created("g", "c", "", messages.StateQueued),
				messages.ChildAttached{ParentID: "c", ChildID: "g", At: t1}},
			wantErr: errBadEvent,
		},
		{
			name: "a job's hold is exclusive until it is released",
			events: []messages.Event{created("a", "", "n", messages.StateQueued), created("b", "", "n", messages.StateQueued),
				messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "a", Since: t0},
				messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "b", Since: t1}},
			wantErr: errBadEvent,
			check: func(t *testing.T, s *jobStore) {
				l := s.leases[lockKey{"r", "n"}]
				if l == nil || l.holder != "a" || !l.since.Equal(t0) || len(s.jobs["a"].holds) != 1 || len(s.jobs["b"].holds) != 0 {
					t.Fatalf("lease %+v", l)
				}
			},
		},
		{
			name: "releasing the holder frees the node",
			events: []messages.Event{created("a", "", "n", messages.StateQueued), messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "a"},
				messages.NodeReleased{RackID: "r", NodeID: "n", Holder: "a"}},
			check: func(t *testing.T, s *jobStore) {
				if len(s.leases) != 0 || len(s.jobs["a"].holds) != 0 {
					t.Fatal("node still held")
				}
			},
		},
		{
			name: "an operation lease and a rack lease are holds like any other",
			events: []messages.Event{
				messages.NodeLocked{RackID: "r", Holder: "lease-1", Operation: "SetPowerState", Since: t0, Expires: t1},
				messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "lease-1", Operation: "SetPowerState", Since: t0, Expires: t1}},
			check: func(t *testing.T, s *jobStore) {
				if len(s.leases) != 2 || len(s.ops["lease-1"].keys) != 2 || s.leases[lockKey{"r", ""}].operation != "SetPowerState" {
					t.Fatalf("leases %v", s.leases)
				}
			},
		},
		{
			name:    "a job that does not exist holds nothing",
			events:  []messages.Event{messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "ghost"}},
			wantErr: messages.ErrJobNotFound,
		},
		{
			name:    "release by another holder is rejected",
			events:  []messages.Event{created("a", "", "n", messages.StateQueued), messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "a"}, messages.NodeReleased{RackID: "r", NodeID: "n", Holder: "b"}},
			wantErr: errBadEvent,
		},
		{
			name:    "release without lock is rejected",
			events:  []messages.Event{messages.NodeReleased{RackID: "r", NodeID: "n", Holder: "a"}},
			wantErr: errBadEvent,
		},
		{
			name: "a parent counts its children by state as they move",
			events: []messages.Event{created("p", "", "", messages.StateRunning),
				created("c1", "p", "n1", messages.StateQueued), messages.ChildAttached{ParentID: "p", ChildID: "c1", At: t0},
				created("c2", "p", "n2", messages.StateQueued), messages.ChildAttached{ParentID: "p", ChildID: "c2", At: t0},
				created("c3", "p", "n3", messages.StateQueued), messages.ChildAttached{ParentID: "p", ChildID: "c3", At: t0},
				messages.JobStarted{ID: "c1", At: t1}, messages.JobStarted{ID: "c2", At: t1},
				messages.JobCompleted{ID: "c1", At: t1}, messages.JobFailed{ID: "c2", At: t1}, messages.JobEvicted{ID: "c3"}},
			check: func(t *testing.T, s *jobStore) {
				p := s.jobs["p"]
				want := childCounts{completed: 1, failed: 1, missing: 1}
				if p.counts != want || p.counts.total() != 3 || s.jobs["c2"].index != 1 {
					t.Fatalf("counts %+v (%d children)", p.counts, p.counts.total())
				}
			},
		},
		{
			name: "reservation children are not counted",
			events: []messages.Event{created("p", "", "", messages.StateQueued),
				messages.JobCreated{ID: "h", ParentID: "p", RackID: "r", NodeID: "n", State: messages.StateRunning, Reservation: true, At: t0},
				messages.ChildAttached{ParentID: "p", ChildID: "h", At: t0}},
			check: func(t *testing.T, s *jobStore) {
				p := s.jobs["p"]
				if p.counts != (childCounts{}) || p.isBatch() || len(p.snap.ChildIDs) != 1 {
					t.Fatalf("%+v", p)
				}
				if _, open := s.openParents["p"]; open {
					t.Fatal("a job with reservations is not a batch parent")
				}
			},
		},
		{
			name:   "eviction removes the record",
			events: []messages.Event{created("a", "", "", messages.StateQueued), messages.JobEvicted{ID: "a"}},
			check: func(t *testing.T, s *jobStore) {
				if len(s.jobs) != 0 {
					t.Fatal("record kept")
				}
			},
		},
		{
			name:   "shutdown flag",
			events: []messages.Event{messages.ShutdownBegun{At: t0}},
			check: func(t *testing.T, s *jobStore) {
				if !s.shuttingDown {
					t.Fatal("not shutting down")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newJobStore()
			var err error
			for i, ev := range tc.events {
				err = s.apply(ev)
				if i < len(tc.events)-1 && err != nil {
					t.Fatalf("event %d (%T): %v", i, ev, err)
				}
			}
			if tc.wantErr == nil && err != nil {
				t.Fatalf("last event: %v", err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("last event: got %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestReplayingEventsRebuildsTheSameIndex(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []messages.Event{
		messages.JobCreated{ID: "p", Type: messages.TypeFirmwareUpdate, State: messages.StateRunning, Description: "Batch", At: t0},
		messages.JobCreated{ID: "c1", ParentID: "p", RackID: "r", NodeID: "n1", State: messages.StateQueued, Description: "Queued", At: t0},
		messages.NodeLocked{RackID: "r", NodeID: "n1", Holder: "c1"},
		messages.ChildAttached{ParentID: "p", ChildID: "c1", At: t0},
		messages.JobStarted{ID: "c1", Description: "Flashing", At: t0},
		messages.JobCompleted{ID: "c1", Description: "Completed", At: t0},
		messages.NodeReleased{RackID: "r", NodeID: "n1", Holder: "c1"},
	}
	a, b := newJobStore(), newJobStore()
	for _, ev := range evs {
		if err := a.apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range evs {
		if err := b.apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.jobs) != 2 || len(b.jobs) != 2 || len(b.leases) != 0 {
		t.Fatalf("jobs %d/%d leases %d", len(a.jobs), len(b.jobs), len(b.leases))
	}
	for id, r := range a.jobs {
		got, want := b.snapshot(b.jobs[id]), a.snapshot(r)
		if got.State != want.State || got.Description != want.Description || len(got.ChildIDs) != len(want.ChildIDs) ||
			b.jobs[id].counts != r.counts {
			t.Fatalf("%s: %+v vs %+v", id, got, want)
		}
	}
}

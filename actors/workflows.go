package actors

import (
	"maps"
	"slices"
	"sync"
)

// workflowSet tracks the workflow goroutines that have not returned. It is
// the one place where the registry and a worker goroutine agree on whether
// a job's workflow still runs: a job sealed while its workflow runs keeps
// its holds (await), and the worker, when its workflow returns (end),
// learns that the registry waits for it and tells it. Both happen under one
// mutex, so either the registry sees the workflow gone and releases at
// once, or the worker sees it awaited and reports its return.
type workflowSet struct {
	mu  sync.Mutex
	ids map[string]bool // job id → the registry awaits its return
}

// begin records that a job's workflow is about to run. The job actor calls
// it in the turn that starts the goroutine, before the actor can end.
func (s *workflowSet) begin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = make(map[string]bool)
	}
	s.ids[id] = false
}

// await reports whether a job's workflow still runs and, if so, marks that
// the registry waits for its return.
func (s *workflowSet) await(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; !ok {
		return false
	}
	s.ids[id] = true
	return true
}

// running reports whether a job's workflow has not returned.
func (s *workflowSet) running(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

// end records that a job's workflow returned; it reports whether the
// registry awaits that news.
func (s *workflowSet) end(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	awaited := s.ids[id]
	delete(s.ids, id)
	return awaited
}

// list returns the ids of the running workflows, sorted.
func (s *workflowSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.ids))
}

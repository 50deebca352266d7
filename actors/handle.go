package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// handle is the messages.Reporter a workflow gets. The first terminal call
// wins; later calls return ErrJobTerminal and change nothing. The terminal
// outcome is kept until the workflow has returned (deliver): a job is seen
// terminal only once nothing works on its nodes any more.
type handle struct {
	id, parentID string
	root         *actor.RootContext
	self         *actor.PID

	mu       sync.Mutex
	terminal bool
	outcome  messages.Outcome
}

var _ messages.Reporter = (*handle)(nil)

// ID implements messages.Reporter.
func (h *handle) ID() string { return h.id }

// ParentID implements messages.Reporter.
func (h *handle) ParentID() string { return h.parentID }

// Progress implements messages.Reporter.
func (h *handle) Progress(description string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terminal {
		return false
	}
	h.root.Send(h.self, &workerProgress{description: description})
	return true
}

// Complete implements messages.Reporter.
func (h *handle) Complete(description, resultJSON string) error {
	return h.finish(messages.Completed(description, resultJSON))
}

// Fail implements messages.Reporter.
func (h *handle) Fail(f messages.Failure) error {
	return h.finish(messages.Failed(f))
}

func (h *handle) finish(out messages.Outcome) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terminal {
		return messages.ErrJobTerminal
	}
	h.terminal, h.outcome = true, out
	return nil
}

// deliver hands the recorded terminal outcome to the job actor; runWorker
// calls it once the workflow has returned.
func (h *handle) deliver() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terminal {
		h.root.Send(h.self, &workerFinished{outcome: h.outcome})
	}
}

// sealIfOpen records the failure f builds unless a terminal state was
// recorded (f is not called then: most workflows record their own); it
// reports whether it did.
func (h *handle) sealIfOpen(f func() messages.Failure) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terminal {
		return false
	}
	h.terminal, h.outcome = true, messages.Failed(f())
	return true
}

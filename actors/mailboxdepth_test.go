package actors

import (
	"errors"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

// The registry's mailbox depth counts the requests queued behind a slow
// turn and falls back to zero once they are answered.
func TestRegistryMailboxDepthCountsTheBacklog(t *testing.T) {
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e, _ := newEngine(t, Options{OnJob: func(messages.JobObservation) {
		// A registry turn that takes long: the first admission's
		// observer holds the turn until the test lets it go.
		once.Do(func() { close(entered); <-gate })
	}})
	// Its start-up messages handled, an idle registry has no backlog.
	eventually(t, "an idle registry's depth is zero", func() bool { return e.RegistryMailboxDepth() == 0 })
	const readers = 5
	errs := make(chan error, readers+1)
	go func() {
		_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "a"}, completes("done", "{}"), nil)
		errs <- err
	}()
	<-entered
	for range readers {
		go func() {
			_, err := e.Get(testCtx(t), "no-such-job", false)
			if errors.Is(err, messages.ErrJobNotFound) {
				err = nil
			}
			errs <- err
		}()
	}
	// The admission being handled and every read behind it.
	eventually(t, "the queued reads show in the depth", func() bool { return e.RegistryMailboxDepth() >= readers+1 })
	close(gate)
	for range readers + 1 {
		if err := <-errs; err != nil {
			t.Fatalf("request behind the slow turn: %v", err)
		}
	}
	eventually(t, "the depth falls back to zero", func() bool { return e.RegistryMailboxDepth() == 0 })
}

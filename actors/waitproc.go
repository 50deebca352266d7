package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
)

// waitProcess is where a waiting caller receives the registry's answer: a
// process in protoactor's registry backed by a channel, one per Wait call.
// Unlike a Future it has no timeout of its own and can be addressed again
// by a request re-sent after a registry restart.
type waitProcess struct {
	sys *actor.ActorSystem
	id  string
	pid *actor.PID
	ch  chan any
}

func newWaitProcess(sys *actor.ActorSystem) *waitProcess {
	w := &waitProcess{sys: sys, id: uuid.NewString(), ch: make(chan any, 1)}
	w.pid, _ = sys.ProcessRegistry.Add(w, "await-"+w.id)
	return w
}

// SendUserMessage implements actor.Process. Only the first answer counts.
func (w *waitProcess) SendUserMessage(_ *actor.PID, msg any) {
	select {
	case w.ch <- actor.UnwrapEnvelopeMessage(msg):
	default:
	}
}

// SendSystemMessage implements actor.Process.
func (w *waitProcess) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (w *waitProcess) Stop(*actor.PID) {}

// close removes the process from protoactor's registry.
func (w *waitProcess) close() { w.sys.ProcessRegistry.Remove(w.pid) }

package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// replyProcess is where a caller of the registry receives its answer: a
// process in protoactor's registry backed by a channel, one per request (or
// per Wait). The facade uses it instead of protoactor's Future, whose
// result is written without a lock when an answer races with its timeout
// (protoactor-go #1145): here the timeout is the caller's own select, and
// an answer that comes late lands in the channel or in dead letters. It can
// be addressed again by a request re-sent after a registry restart.
type replyProcess struct {
	sys *actor.ActorSystem
	id  string
	pid *actor.PID
	ch  chan any
}

func newReplyProcess(sys *actor.ActorSystem) *replyProcess {
	w := &replyProcess{sys: sys, id: "reply-" + sys.ProcessRegistry.NextId(), ch: make(chan any, 1)}
	w.pid, _ = sys.ProcessRegistry.Add(w, w.id)
	return w
}

// SendUserMessage implements actor.Process. Only the first answer counts.
func (w *replyProcess) SendUserMessage(_ *actor.PID, msg any) {
	select {
	case w.ch <- actor.UnwrapEnvelopeMessage(msg):
	default:
	}
}

// SendSystemMessage implements actor.Process.
func (w *replyProcess) SendSystemMessage(*actor.PID, any) {}

// Stop implements actor.Process.
func (w *replyProcess) Stop(*actor.PID) {}

// close removes the process from protoactor's registry.
func (w *replyProcess) close() { w.sys.ProcessRegistry.Remove(w.pid) }

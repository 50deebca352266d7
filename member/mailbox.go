package member

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// grainMailbox is the rack grains' mailbox: protoactor's unbounded one,
// except that a request it delivers to a grain that has been told to
// stop is handed to protoactor's dead letters instead of being dropped.
//
// At the pinned protoactor, an actor told to stop stays registered while
// it is Stopping (its Stopping handler runs inside the Stop system
// message), so requests sent meanwhile are queued in its mailbox; once it
// has stopped, its context ignores every user message it is given
// (actorContext.InvokeUserMessage returns at stateStopped), and the
// mailbox then gives it all that was queued: dropped unanswered, each
// request waiting out its caller's timeout. A request sent after the
// actor was unregistered goes to the dead letters, which answer its
// sender with a DeadLetterResponse; this mailbox gives the queued ones
// the same answer, which cluster.Request retries at the identity's next
// activation. A message without a sender is dropped, as before.
func grainMailbox() actor.Mailbox {
	return &answeringMailbox{Mailbox: actor.Unbounded()()}
}

// answeringMailbox wraps a mailbox so that the messages it delivers pass
// through an answeringInvoker.
type answeringMailbox struct{ actor.Mailbox }

// RegisterHandlers implements actor.Mailbox.
func (m *answeringMailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.Mailbox.RegisterHandlers(&answeringInvoker{MessageInvoker: invoker}, dispatcher)
}

// answeringInvoker passes messages to the actor until the actor has been
// told to stop, and hands requests to the dead letters from then on.
type answeringInvoker struct {
	actor.MessageInvoker
	stopped atomic.Bool
}

// deadLettersOf is what an actor's context tells of the actor's system and
// identity (protoactor's actor context, the mailbox's invoker, has both).
type deadLettersOf interface {
	ActorSystem() *actor.ActorSystem
	Self() *actor.PID
}

// InvokeSystemMessage implements actor.MessageInvoker: after the Stop
// message has been handled, the actor is stopping or has stopped.
func (i *answeringInvoker) InvokeSystemMessage(msg any) {
	i.MessageInvoker.InvokeSystemMessage(msg)
	if _, ok := msg.(*actor.Stop); ok {
		i.stopped.Store(true)
	}
}

// InvokeUserMessage implements actor.MessageInvoker.
func (i *answeringInvoker) InvokeUserMessage(msg any) {
	if !i.stopped.Load() {
		i.MessageInvoker.InvokeUserMessage(msg)
		return
	}
	ctx, ok := i.MessageInvoker.(deadLettersOf)
	if !ok || actor.UnwrapEnvelopeSender(msg) == nil {
		return
	}
	sys := ctx.ActorSystem()
	sys.DeadLetter.SendUserMessage(ctx.Self(), msg)
}

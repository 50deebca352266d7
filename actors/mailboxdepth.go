package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// mailboxDepth counts the messages posted to one mailbox and not yet
// handled: protoactor calls MessagePosted when a sender enqueues and
// MessageReceived after the handler returned, so the difference is the
// backlog a new request waits behind (system messages included).
type mailboxDepth struct{ n atomic.Int64 }

func (d *mailboxDepth) MailboxStarted()        {}
func (d *mailboxDepth) MessagePosted(any)      { d.n.Add(1) }
func (d *mailboxDepth) MessageReceived(any)    { d.n.Add(-1) }
func (d *mailboxDepth) MailboxEmpty()          {}
func (d *mailboxDepth) depth() int             { return int(max(d.n.Load(), 0)) }
func (c *core) registryMailbox() *mailboxDepth { return c.regDepth.Load() }
func (c *core) countRegistryMailbox() actor.MailboxProducer {
	return func() actor.Mailbox {
		// A replaced registry gets a new mailbox: its counter starts at
		// zero and becomes the one the gauge reads, so messages left in a
		// dead registry's mailbox are not counted forever.
		d := &mailboxDepth{}
		c.regDepth.Store(d)
		return actor.Unbounded(d)()
	}
}

// RegistryMailboxDepth returns how many messages wait in (or are being
// handled by) the job registry's mailbox right now: the queue every
// admission, status read and terminal report goes through.
func (e *Engine) RegistryMailboxDepth() int {
	if d := e.core.registryMailbox(); d != nil {
		return d.depth()
	}
	return 0
}

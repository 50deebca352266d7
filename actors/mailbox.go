package actors

import (
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// Engine mailbox tuning.
const (
	// inlineBudget is how many messages a sender that finds the registry
	// idle processes on its own goroutine before handing the rest of the
	// backlog to a goroutine of the mailbox. An uncontended request is thus
	// answered without any goroutine hand-off, and no caller can be kept
	// busy with other callers' work for more than a few messages.
	inlineBudget = 4
	// backlogThroughput is how many messages the hand-off goroutine handles
	// between yields.
	backlogThroughput = 300
)

// inlineMailbox is the mailbox of every engine actor. protoactor's default
// mailbox starts a goroutine for every run, so every request pays two
// goroutine hand-offs; this one runs the first few messages on the sender's
// goroutine. That is safe because no engine handler blocks: each only
// touches its actor's state and sends messages. System messages go first;
// SuspendMailbox/ResumeMailbox (supervision) pause user messages.
type inlineMailbox struct {
	mu        sync.Mutex
	sys, user fifo
	running   bool // a goroutine owns the processing loop
	suspended bool
	invoker   actor.MessageInvoker
}

var _ actor.Mailbox = (*inlineMailbox)(nil)

func newInlineMailbox() actor.Mailbox { return &inlineMailbox{} }

// PostUserMessage implements actor.Mailbox.
func (m *inlineMailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	m.user.push(msg)
	m.scheduleLocked()
}

// PostSystemMessage implements actor.Mailbox.
func (m *inlineMailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.sys.push(msg)
	m.scheduleLocked()
}

// RegisterHandlers implements actor.Mailbox. The dispatcher is not used.
func (m *inlineMailbox) RegisterHandlers(invoker actor.MessageInvoker, _ actor.Dispatcher) {
	m.mu.Lock()
	m.invoker = invoker
	m.mu.Unlock()
}

// Start implements actor.Mailbox.
func (m *inlineMailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *inlineMailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.user.len()
}

// scheduleLocked starts processing on the caller's goroutine unless someone
// already processes; it releases m.mu.
func (m *inlineMailbox) scheduleLocked() {
	if m.running || m.invoker == nil {
		m.mu.Unlock()
		return
	}
	m.running = true
	m.mu.Unlock()
	m.process(inlineBudget)
}

// process handles messages until the mailbox is empty (or suspended). With a
// budget it stops after that many and hands the loop to a new goroutine,
// which then runs until the mailbox is empty.
func (m *inlineMailbox) process(budget int) {
	for done := 0; ; done++ {
		if budget > 0 && done == budget {
			go m.process(0)
			return
		}
		if budget == 0 && done > 0 && done%backlogThroughput == 0 {
			runtime.Gosched()
		}
		msg, system, ok := m.next()
		if !ok {
			return
		}
		m.invoke(msg, system)
	}
}

// next pops the next message, or marks the mailbox idle when there is none.
func (m *inlineMailbox) next() (any, bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg, ok := m.sys.pop(); ok {
		return msg, true, true
	}
	if !m.suspended {
		if msg, ok := m.user.pop(); ok {
			return msg, false, true
		}
	}
	m.running = false
	return nil, false, false
}

func (m *inlineMailbox) invoke(msg any, system bool) {
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg) // suspends us; the keeper restarts the registry
		}
	}()
	if !system {
		m.invoker.InvokeUserMessage(msg)
		return
	}
	switch msg.(type) {
	case *actor.SuspendMailbox:
		m.setSuspended(true)
	case *actor.ResumeMailbox:
		m.setSuspended(false)
	default:
		m.invoker.InvokeSystemMessage(msg)
	}
}

func (m *inlineMailbox) setSuspended(v bool) {
	m.mu.Lock()
	m.suspended = v
	m.mu.Unlock()
}

// fifo is a slice-backed queue.
type fifo struct {
	items []any
	head  int
}

func (q *fifo) push(v any) { q.items = append(q.items, v) }

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) pop() (any, bool) {
	if q.head == len(q.items) {
		return nil, false
	}
	v := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 1024 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return v, true
}

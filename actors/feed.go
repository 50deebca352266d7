package actors

import (
	"github.com/rmsd/rmsd/feed"
	"github.com/rmsd/rmsd/messages"
)

// DefaultFeedBuffer is a subscription's buffer when Subscribe is asked
// for none.
const DefaultFeedBuffer = 256

// Subscription is one reader of the engine's change feed: C delivers the
// changes in the order the registry made them, and is closed by Close, by
// the engine's Close, or when the subscriber fell behind its buffer (then
// Dropped is true and changes were lost: reread the state and subscribe
// again). The registry publishes on its own turn and never waits, so a
// slow reader costs the engine one failed send, never a blocked turn.
type Subscription = feed.Subscription[messages.JobChange]

// Subscribe returns a subscription to the engine's changes: every job
// admitted, started, progressed, sealed or evicted (reservation children
// included) and every node or rack hold taken or released, as the
// registry applies them, buffered up to buffer changes
// (DefaultFeedBuffer when 0). Subscribe first, then read the state
// (List, Holds, Get): whatever changes after the read arrives on C. Close
// it when done.
func (e *Engine) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultFeedBuffer
	}
	return e.core.feed.Subscribe(buffer)
}

// feedCollector gathers one applyAll's changes for the feed.
type feedCollector struct {
	jobs    []string // ids whose snapshot changed, in first-change order
	seen    map[string]struct{}
	changes []messages.JobChange
}

// note records what ev changed, once it applied.
func (c *feedCollector) note(r *registry, ev messages.Event) {
	switch e := ev.(type) {
	case messages.NodeLocked:
		c.changes = append(c.changes, messages.JobChange{Hold: r.holdChange(e.RackID, e.NodeID, e.Holder, e.Operation, true)})
	case messages.NodeReleased:
		c.changes = append(c.changes, messages.JobChange{Hold: r.holdChange(e.RackID, e.NodeID, e.Holder, "", false)})
	case messages.JobEvicted:
		c.changes = append(c.changes, messages.JobChange{Evicted: e.ID})
	case messages.ChildAttached:
		c.job(e.ParentID)
		c.job(e.ChildID)
	case messages.ShutdownBegun:
	default:
		c.job(ev.Subject())
	}
}

func (c *feedCollector) job(id string) {
	if id == "" {
		return
	}
	if c.seen == nil {
		c.seen = make(map[string]struct{})
	}
	if _, ok := c.seen[id]; ok {
		return
	}
	c.seen[id] = struct{}{}
	c.jobs = append(c.jobs, id)
}

// flush publishes the collected changes: the jobs' snapshots as they are
// now, then the holds and evictions in the order they happened.
func (c *feedCollector) flush(r *registry) {
	out := make([]messages.JobChange, 0, len(c.jobs)+len(c.changes))
	for _, id := range c.jobs {
		if rec, ok := r.store.jobs[id]; ok {
			snap := rec.snap
			out = append(out, messages.JobChange{Job: &snap})
		}
	}
	out = append(out, c.changes...)
	r.core.feed.Publish(out...)
}

// holdChange describes a hold event, naming the top-level job it belongs to.
func (r *registry) holdChange(rack, node, holder, operation string, held bool) *messages.HoldChange {
	h := &messages.HoldChange{RackID: rack, NodeID: node, Holder: holder, Operation: operation, Held: held}
	h.Job = r.topJob(holder)
	return h
}

// topJob is the top-level job of a holder: the job itself, its parent, or
// "" for an operation's lease.
func (r *registry) topJob(holder string) string {
	rec, ok := r.store.jobs[holder]
	if !ok {
		return ""
	}
	if rec.snap.ParentID != "" {
		return rec.snap.ParentID
	}
	return holder
}

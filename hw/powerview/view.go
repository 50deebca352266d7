package powerview

import (
	"slices"
	"sync"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// Entry is what rmsd last learned of one node.
type Entry struct {
	RackID string
	NodeID string
	// State is the last-known power state; "" when never read.
	State platform.PowerState
	// At is when rmsd last learned the power state.
	At time.Time
	// Firmware is the node's firmware inventory as last read (nil when
	// never read).
	Firmware []platform.Firmware
	// Slot is the tray's slot number in its rack as the device reported
	// it (0 when unknown).
	Slot int64
}

// View is the last-known power state of every node rmsd has read or
// changed. Safe for concurrent use.
type View struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[hw.Ref]Entry
	subs    map[*Subscription]struct{}
}

// New returns an empty view stamped by now (time.Now when nil).
func New(now func() time.Time) *View {
	if now == nil {
		now = time.Now
	}
	return &View{now: now, entries: map[hw.Ref]Entry{}, subs: map[*Subscription]struct{}{}}
}

// Seen records a state; it is a platform.PowerSeen. Subscribers hear of
// it only when the state differs from the one known before.
func (v *View) Seen(rackID, nodeID string, st platform.PowerState) {
	ref := hw.Ref{RackID: rackID, NodeID: nodeID}
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entries[ref]
	old := e.State
	e.RackID, e.NodeID, e.State, e.At = rackID, nodeID, st, v.now()
	v.entries[ref] = e
	if old == st {
		return
	}
	v.tell(e)
}

// SetFirmware records a node's firmware inventory as just read.
// Subscribers hear of it only when it differs from the one known before
// (the first read always does).
func (v *View) SetFirmware(rackID, nodeID string, fw []platform.Firmware) {
	if fw == nil {
		fw = []platform.Firmware{} // read: nil means never read
	}
	v.update(rackID, nodeID, func(e *Entry) bool {
		same := e.Firmware != nil && slices.Equal(e.Firmware, fw)
		e.Firmware = fw
		return !same
	})
}

// SetSlot records a tray's slot number as its device reported it.
func (v *View) SetSlot(rackID, nodeID string, slot int64) {
	v.update(rackID, nodeID, func(e *Entry) bool { e.Slot = slot; return true })
}

// update changes a node's entry, telling subscribers when change reports
// that it changed something they should hear of.
func (v *View) update(rackID, nodeID string, change func(*Entry) bool) {
	ref := hw.Ref{RackID: rackID, NodeID: nodeID}
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entries[ref]
	e.RackID, e.NodeID = rackID, nodeID
	tell := change(&e)
	v.entries[ref] = e
	if tell {
		v.tell(e)
	}
}

// tell hands e to every subscriber; v.mu is held.
func (v *View) tell(e Entry) {
	for s := range v.subs {
		select {
		case s.c <- e:
		default:
			s.dropped = true
			v.remove(s)
		}
	}
}

// Get returns a node's entry, false when rmsd has never learned its state.
func (v *View) Get(rackID, nodeID string) (Entry, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[hw.Ref{RackID: rackID, NodeID: nodeID}]
	return e, ok
}

// Rack returns the entries of one rack's nodes, by node id.
func (v *View) Rack(rackID string) map[string]Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]Entry{}
	for ref, e := range v.entries {
		if ref.RackID == rackID {
			out[ref.NodeID] = e
		}
	}
	return out
}

// Subscription hears of every change of a node's state.
type Subscription struct {
	c       chan Entry
	view    *View
	dropped bool // under view.mu
}

// Subscribe returns a subscription buffered for n changes: a subscriber
// that falls further behind is dropped (C closed, Dropped true), never
// waited for.
func (v *View) Subscribe(n int) *Subscription {
	if n <= 0 {
		n = 64
	}
	s := &Subscription{c: make(chan Entry, n), view: v}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.subs[s] = struct{}{}
	return s
}

// C delivers the changes; it is closed by Close or a drop.
func (s *Subscription) C() <-chan Entry { return s.c }

// Dropped reports whether the view gave up on the subscriber.
func (s *Subscription) Dropped() bool {
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	return s.dropped
}

// Close ends the subscription; safe more than once and after a drop.
func (s *Subscription) Close() {
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	s.view.remove(s)
}

// remove closes s if subscribed; v.mu is held.
func (v *View) remove(s *Subscription) {
	if _, ok := v.subs[s]; !ok {
		return
	}
	delete(v.subs, s)
	close(s.c)
}

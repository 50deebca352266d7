package sitejobs

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/member/rackpb"
)

// changeLog keeps a rack engine's newest changes, numbered, so that other
// members can read them after a cursor (a long poll each). Its id changes
// whenever changes may have been lost (a new log, or its feed dropped it):
// a cursor of another id is answered with a reset.
type changeLog struct {
	keep int

	mu sync.Mutex
	id string
	// entries hold the changes numbered base+1 on; last is the newest
	// change's number (base when there is none).
	entries []*rackpb.JobChangeRecord
	base    uint64
	// wake is closed (and replaced) when a change arrives or the log
	// closes, ending every wait.
	wake   chan struct{}
	closed bool
}

func newChangeLog(keep int) *changeLog {
	return &changeLog{keep: keep, id: uuid.NewString(), wake: make(chan struct{})}
}

// last is the newest change's number; l.mu is held.
func (l *changeLog) last() uint64 { return l.base + uint64(len(l.entries)) }

// add appends changes and wakes the waiters.
func (l *changeLog) add(changes ...*rackpb.JobChangeRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, changes...)
	if over := len(l.entries) - l.keep; over > l.keep/2 {
		// Trim in steps, not at every change.
		l.entries = append([]*rackpb.JobChangeRecord(nil), l.entries[over:]...)
		l.base += uint64(over)
	}
	l.notify()
}

// restart begins a log of a new id: the changes from the old one's end to
// now were lost (the engine's feed dropped the log).
func (l *changeLog) restart() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id, l.entries, l.base = uuid.NewString(), nil, 0
	l.notify()
}

// close ends the log: the engine stopped.
func (l *changeLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.notify()
}

// notify wakes the waiters; l.mu is held.
func (l *changeLog) notify() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// since answers a cursor: the changes after it (at most max), the cursor
// after them, and whether the cursor was not in the log (reset; the
// answer's cursor is then the log's newest, with no changes). A first
// contact (log "") is no reset. It waits up to wait for a change when
// there is none after the cursor. closed reports a stopped engine.
func (l *changeLog) since(ctx context.Context, log string, seq uint64, maxChanges int, wait time.Duration) (changes []*rackpb.JobChangeRecord, id string, next uint64, reset, closed bool) {
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		l.mu.Lock()
		switch {
		case l.closed:
			l.mu.Unlock()
			return nil, "", 0, false, true
		case log != l.id || seq < l.base || seq > l.last():
			id, next = l.id, l.last()
			l.mu.Unlock()
			return nil, id, next, log != "", false
		case seq < l.last():
			from := seq - l.base
			to := min(uint64(len(l.entries)), from+uint64(maxChanges))
			changes = append(changes, l.entries[from:to]...)
			id, next = l.id, l.base+to
			l.mu.Unlock()
			return changes, id, next, false, false
		}
		wake := l.wake
		l.mu.Unlock()
		if timeout == nil {
			return nil, log, seq, false, false
		}
		select {
		case <-wake:
		case <-timeout:
			return nil, log, seq, false, false
		case <-ctx.Done():
			return nil, log, seq, false, false
		}
	}
}

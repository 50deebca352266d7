package rmsserver

import (
	"container/list"
	"net"
	"sync"
	"time"

	"github.com/rmsd/rmsd/grpc/callerid"
)

// Repeats of in-band failures. A caller that polls a job which expired, or
// a node it cannot reach, gets the same in-band failure on every poll; a
// warn line each time would drown the log. The reasons interceptor logs
// the first (rpc, rack, node, reason) of each caller at warn and its
// repeats within repeatWindow at debug; the first occurrence after the
// window is a warn again, carrying how many repeats went to debug. The
// trailer is set on every reply regardless: only the log is thinned.
const (
	// repeatWindow is how long a warned failure's repeats log at debug.
	repeatWindow = 10 * time.Minute
	// maxRemembered bounds the failures remembered; past it the one warned
	// longest ago is forgotten, so its next repeat warns again.
	maxRemembered = 4096
)

// failureKey is one caller's failure of one RPC.
type failureKey struct {
	caller, rpc, rack, node, reason string
}

// warnedFailure is a failureKey last logged at warn at warned, with the
// repeats logged at debug since.
type warnedFailure struct {
	key     failureKey
	warned  time.Time
	repeats int
}

// repeatFilter remembers, for up to max failures, when each was last
// logged at warn. It is safe for concurrent use by the RPCs it serves.
type repeatFilter struct {
	window time.Duration
	max    int
	now    func() time.Time

	mu    sync.Mutex
	order *list.List // of *warnedFailure, warned longest ago first
	byKey map[failureKey]*list.Element
}

func newRepeatFilter(window time.Duration, max int, now func() time.Time) *repeatFilter {
	return &repeatFilter{window: window, max: max, now: now, order: list.New(), byKey: map[failureKey]*list.Element{}}
}

// warn reports whether the failure k is to be logged at warn (its first
// occurrence, or the first after the window) and, if so, how many repeats
// were logged at debug since it last was.
func (f *repeatFilter) warn(k failureKey) (warn bool, repeats int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if e, ok := f.byKey[k]; ok {
		w := e.Value.(*warnedFailure)
		if now.Sub(w.warned) < f.window {
			w.repeats++
			return false, 0
		}
		repeats = w.repeats
		w.warned, w.repeats = now, 0
		f.order.MoveToBack(e)
		return true, repeats
	}
	for f.order.Len() >= f.max {
		oldest := f.order.Front()
		delete(f.byKey, oldest.Value.(*warnedFailure).key)
		f.order.Remove(oldest)
	}
	f.byKey[k] = f.order.PushBack(&warnedFailure{key: k, warned: now})
	return true, 0
}

// callerKey names the caller of an RPC for the repeat filter: a verified
// certificate's subject and names, else the peer's host without its port
// (a poller that dials anew each time is the same caller).
func callerKey(id callerid.Identity) string {
	if id.Verified {
		return id.String()
	}
	if host, _, err := net.SplitHostPort(id.Addr); err == nil {
		return "peer " + host
	}
	return id.String()
}

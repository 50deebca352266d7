package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// awaiter is one caller's subscription to the end of some jobs. There is at
// most one per waiter id: a request sent again after a registry restart
// finds it and only updates where the answer goes.
type awaiter struct {
	id        string
	to        *actor.PID
	ids       []string // the jobs it was registered on
	remaining int
}

// awaitTerminal subscribes a caller to the end of the listed jobs. Jobs
// that are already terminal or gone count as ended; when none is left, the
// answer goes out at once.
func (r *registry) awaitTerminal(ctx actor.Context, m *messages.AwaitTerminal) {
	s := r.store
	if s.closing {
		ctx.Respond(&messages.AwaitTerminalReply{Err: messages.ErrEngineClosed})
		return
	}
	if w, ok := s.awaiters[m.WaiterID]; ok {
		w.to = ctx.Sender()
		return
	}
	w := &awaiter{id: m.WaiterID, to: ctx.Sender()}
	for _, id := range m.IDs {
		rec, ok := s.jobs[id]
		if !ok || rec.snap.State.IsTerminal() || slices.Contains(w.ids, id) {
			continue
		}
		w.ids = append(w.ids, id)
		w.remaining++
		s.waiters[id] = append(s.waiters[id], w)
	}
	if w.remaining == 0 {
		r.respond(ctx, &messages.AwaitTerminalReply{}, r.lastSeq(), nil)
		return
	}
	s.awaiters[w.id] = w
}

// settleWaiters counts job id as ended for every subscription on it and
// answers those that have nothing left to wait for.
func (r *registry) settleWaiters(ctx actor.Context, id string) {
	ws, ok := r.store.waiters[id]
	if !ok {
		return
	}
	delete(r.store.waiters, id)
	for _, w := range ws {
		w.remaining--
		if w.remaining == 0 {
			delete(r.store.awaiters, w.id)
			r.sendDurable(ctx, w.to, &messages.AwaitTerminalReply{}, r.lastSeq(), nil)
		}
	}
}

// answerAwaiter ends a subscription early with err.
func (r *registry) answerAwaiter(ctx actor.Context, waiterID string, err error) {
	w, ok := r.store.awaiters[waiterID]
	if !ok {
		return
	}
	r.dropAwaiter(waiterID)
	ctx.Send(w.to, &messages.AwaitTerminalReply{Err: err})
}

// dropAwaiter removes a subscription whose caller gave up.
func (r *registry) dropAwaiter(waiterID string) {
	s := r.store
	w, ok := s.awaiters[waiterID]
	if !ok {
		return
	}
	delete(s.awaiters, waiterID)
	for _, id := range w.ids {
		ws := slices.DeleteFunc(s.waiters[id], func(x *awaiter) bool { return x == w })
		if len(ws) == 0 {
			delete(s.waiters, id)
		} else {
			s.waiters[id] = ws
		}
	}
}

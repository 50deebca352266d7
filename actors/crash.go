package actors

import (
	"fmt"
	"reflect"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// requestFailed answers a request the registry could not handle.
type requestFailed struct{ err error }

// poisonRing remembers the last few requests that crashed the registry.
// The facade re-sends the very same request value when an answer is lost,
// so pointer identity recognises a retry of a request that crashed it.
type poisonRing struct {
	items [16]any
	next  int
}

func (p *poisonRing) has(msg any) bool {
	if !isPointer(msg) {
		return false
	}
	for _, it := range p.items {
		if it == msg {
			return true
		}
	}
	return false
}

func (p *poisonRing) add(msg any) {
	p.items[p.next] = msg
	p.next = (p.next + 1) % len(p.items)
}

func isPointer(msg any) bool {
	return msg != nil && reflect.TypeOf(msg).Kind() == reflect.Pointer
}

// recoverRequest turns a panic of the registry while it handled a request
// into an answer: the caller gets ErrRegistryCrashed at once, the request
// is remembered so a retry is answered the same way without crashing the
// registry again, and the panic goes on to the keeper, which restarts the
// registry over the same store.
func (r *registry) recoverRequest(ctx actor.Context, msg any) {
	v := recover()
	if v == nil {
		return
	}
	r.store.halfTurn = true // the restarted registry reconciles (reconcile.go)
	if ctx.Sender() != nil && isPointer(msg) {
		r.store.poisoned.add(msg)
		ctx.Respond(&requestFailed{err: errRegistryCrashed(msg)})
		r.core.log.Error().Str("request", fmt.Sprintf("%T", msg)).Str("panic", fmt.Sprint(v)).
			Msg("job registry crashed on a request; the request is refused and the registry restarts")
	} else {
		r.core.log.Error().Str("request", fmt.Sprintf("%T", msg)).Str("panic", fmt.Sprint(v)).
			Msg("job registry crashed; it restarts with its state")
	}
	panic(v)
}

func errRegistryCrashed(msg any) error {
	return fmt.Errorf("%T: %w", msg, messages.ErrRegistryCrashed)
}

package member

import (
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// TestRequestsQueuedBehindAStopAreDeadLetters: requests that wait in a
// grain's mailbox while it is Stopping are answered as dead letters once
// it has stopped (protoactor alone drops them unanswered), as is a
// request sent after it stopped; a message without a sender is dropped.
func TestRequestsQueuedBehindAStopAreDeadLetters(t *testing.T) {
	// Requests to dead letters are not logged: protoactor's log throttle
	// would start a goroutine that outlives the test.
	sys := actor.NewActorSystem(actor.WithDeadLetterRequestLogging(false))
	defer sys.Shutdown()
	stopping, release := make(chan struct{}), make(chan struct{})
	served := make(chan any, 8)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch msg := ctx.Message().(type) {
		case *actor.Stopping:
			close(stopping)
			<-release
		case string:
			served <- msg
			ctx.Respond(msg)
		}
	}, actor.WithMailbox(grainMailbox)))

	if res, err := sys.Root.RequestFuture(pid, "before", 10*time.Second).Result(); err != nil || res != "before" {
		t.Fatalf("a request before the stop: %v, %v", res, err)
	}
	<-served
	stopped := sys.Root.StopFuture(pid)
	<-stopping
	queued := []*actor.Future{
		sys.Root.RequestFuture(pid, "queued 1", 10*time.Second),
		sys.Root.RequestFuture(pid, "queued 2", 10*time.Second),
	}
	sys.Root.Send(pid, "sent")
	close(release)
	if err := stopped.Wait(); err != nil {
		t.Fatal(err)
	}
	after := sys.Root.RequestFuture(pid, "after", 10*time.Second)
	for i, f := range append(queued, after) {
		started := time.Now()
		if res, err := f.Result(); !errors.Is(err, actor.ErrDeadLetter) {
			t.Errorf("request %d: %v, %v after %s; want a dead letter", i, res, err, time.Since(started))
		}
	}
	select {
	case msg := <-served:
		t.Errorf("%q served after the stop", msg)
	default:
	}
}

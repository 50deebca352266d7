package actors

import "github.com/asynkron/protoactor-go/actor"

// handlerMiddleware wraps every engine actor's handler (registry, keeper,
// job, lock and batch actors) when set. Tests only: they set it before
// New, to watch handlers run (reentry_test.go); production leaves it nil.
var handlerMiddleware actor.ReceiverMiddleware

// withHandlerMiddleware is the props option that installs
// handlerMiddleware, or none.
func withHandlerMiddleware() []actor.PropsOption {
	if handlerMiddleware == nil {
		return nil
	}
	return []actor.PropsOption{actor.WithReceiverMiddleware(handlerMiddleware)}
}

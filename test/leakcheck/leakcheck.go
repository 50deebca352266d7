// Package leakcheck holds the goroutine-leak check's exceptions that rmsd's
// tests share, each named for what it lets pass and why, so that a package
// test says which one it needs rather than repeat a runtime symbol. It is
// for tests only.
package leakcheck

import "go.uber.org/goleak"

// ProtoactorThrottle lets pass protoactor's dead-letter throttle: it
// resets itself on a short-lived goroutine that ends one throttle
// interval after the last dead letter, so a test that stopped an actor
// system moments ago may still see it.
var ProtoactorThrottle = goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1")

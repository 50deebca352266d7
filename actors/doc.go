// Package actors is the job engine: it admits, runs, aggregates, retains
// and drains the asynchronous jobs behind rmsd's long-running RPCs, on the
// protoactor-go actor model. Engine is its synchronous facade.
//
// # Supervision tree
//
//	root
//	├── jobs-N (keeper)            restarts the registry on panic (same store)
//	│   └── registry-M             and spawns a new one (same store) if stopped
//	├── job-<uuid>   (Job)         one per leaf job; runs the Workflow goroutine
//	├── lock-N       (NodeLock)    one per locked (rack, node); watches holders;
//	│                              spawned by the first holder's Job actor
//	└── batch-N      (BatchParent) one per open parent; aggregates children
//
// Job, NodeLock and BatchParent actors are top-level actors under a guardian
// whose decider always answers Stop: they are never restarted (hardware side
// effects are not idempotent) and a registry crash or restart does not touch
// them. The registry watches all of them.
//
// # Where the state lives
//
// The registry is the only owner of the job index. Its state (jobs, node
// index, open parents, watched PIDs, pending waits) lives in a store that the
// keeper's producer injects into every registry instance, so restarting or
// respawning the registry loses no job and no lock. On start the registry
// re-watches every actor (a dead one answers with Terminated at once), sends
// each its new PID and asks it to resend any report it may have missed
// (terminal reports, batch verdicts), seals leaves whose job
// actor is gone and respawns missing lock and batch actors. Every change of
// the index is an event (messages.JobCreated, JobStarted, JobFailed,
// NodeLocked, ...) applied by one function, jobStore.apply, so a journal
// can replay it.
//
// # Job rules
//
// A job moves Queued → Running → Completed | Failed (Queued may go straight
// to a terminal state); terminal states are never overwritten. A worker that
// returns or panics without recording a terminal state, or whose Job actor
// is stopped first, leaves its job Failed/Internal with the message
// "job task exited before recording a terminal state". A job actor re-sends
// its terminal report until the registry acknowledges it and sends it once
// more while stopping, before its Terminated notice; the registry only
// applies the fallback seal after the user messages queued before that
// notice, so a recorded state is never clobbered.
//
// Admission runs, in one registry message, the checks shutdown → parent →
// node busy → capacity (pruning expired terminal jobs only when full). A
// batch is admitted in one request: the parent, then each child, before any
// child workflow starts. Parents are aggregated on read, when their last
// child ends (BatchParent) and on every reaper pass; the reaper then evicts
// expired terminal jobs, children before their parent.
//
// No actor blocks its mailbox on another actor: replies that must wait
// (AwaitTerminal) are sent later, and the facade retries requests lost to a
// registry restart until the caller's context ends.
//
// # Mailboxes
//
// Every engine actor uses inlineMailbox: a sender that finds the mailbox
// idle runs the first few messages on its own goroutine, and only a longer
// backlog moves to a goroutine of the mailbox. This removes the two
// goroutine hand-offs protoactor's default mailbox costs per request; it is
// safe because no engine handler blocks (they touch their own state and
// send messages, nothing else).
package actors

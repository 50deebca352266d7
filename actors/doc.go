// Package actors is the job engine: it admits, runs, aggregates, retains
// and drains the asynchronous jobs behind rmsd's long-running RPCs, and it
// is the one owner of which node is busy, on the protoactor-go actor
// model. Engine is its synchronous facade.
//
// # Supervision tree
//
//	root
//	├── jobs-N (keeper)            restarts the registry on panic (same store)
//	│   └── registry-M             and spawns a new one (same store) if stopped
//	├── job-<uuid>   (Job)         one per job; runs the Workflow goroutine
//	├── lock-N       (NodeLock)    one per lease of a (rack, node) or a rack
//	└── batch-N      (BatchParent) one per open batch parent
//
// Job, NodeLock and BatchParent actors are top-level actors under a guardian
// whose decider always answers Stop: they are never restarted (hardware side
// effects are not idempotent) and a registry crash or restart does not touch
// them. The registry spawns and watches all of them. Every engine actor runs
// on protoactor's default mailbox through the engine's dispatcher, a small
// pool of long-lived goroutines: no actor's handler ever runs inside another
// actor's handler.
//
// # Where the state lives
//
// The registry is the only owner of the job index, the leases and the
// parents' child counts. Its state lives in a store that the keeper's
// producer injects into every registry instance, so restarting or
// respawning the registry loses no job and no lease. On start the registry
// counts a new generation, re-watches every actor (a dead one answers with
// Terminated at once), asks each to resend any report it may have missed
// (terminal reports, batch verdicts), seals jobs whose actor is gone and
// respawns missing lock and batch actors. Every change of the index is an
// event (messages.JobCreated, JobStarted, JobFailed, NodeLocked, ...)
// applied by one function, jobStore.apply, so a journal can replay it.
//
// # Durability
//
// With Options.Journal set, the index also outlives the process. apply's
// durable events (jobs and the holds of jobs) are handed to a writer
// goroutine that appends them to the store's journal in group commits;
// every reply that shows their effect (an admitted job's id, a status, a
// finished wait) waits until they are committed, while the registry's turn
// never waits for the database (journal.go). A job's workflow starts only
// once its admission is committed, so no hardware is touched for a job a
// restart could not bring back; should the write fail first, the job ends
// Failed without running. When the tail outgrows four
// events per tracked job, a snapshot of the index replaces the journal in
// one commit (durable.go). On start the engine replays the journal; the
// registry's first turn seals every job that was not terminal Failed,
// "interrupted by restart of rmsd at stage ..." (Options.Interrupted names
// another cause: a cluster member taking over a rack), releasing its holds,
// and re-aggregates the parents (replay.go). Each journal row names the
// jobs it creates (store.Event.Jobs), which a rack's journal indexes. While the journal cannot be
// written, admission is refused with messages.ErrStoreUnavailable and
// reads answer from memory. A commit that has not answered within
// Options.StoreTimeout counts as failed, so a stalled store refuses the
// admissions waiting for it (a facade's retry of the same request
// included: it too is answered only once the commit succeeded); a read
// waits for a commit at most a fifth of that bound.
//
// # Holds
//
// A hold is exclusive. A job holds its node from admission to its terminal
// state; a job with a messages.Reservation (a cold reboot) also holds its
// rack and, as reservation children visible in its job status, every node
// it drives, all admitted in one message. A node is held with its devices
// (canonical BMC and switch-host keys), so a device named under another
// (rack, node) is refused too; a rack hold is the rack's power domain,
// granted only while no node of the rack is held, refusing every node of
// the rack while held (domain.go). Synchronous operations (power
// changes, node deletion) take short leases (Engine.Lease) that end on
// Release or after their TTL. A refused hold says who holds the node: a
// job in upstream's words, "job already in progress for rack R node N
// (job_id J)". When a job is sealed, the same registry turn releases every
// hold it and its reservation children have, so whoever sees a job terminal
// finds its nodes free.
//
// A node is free only once nothing works on it. A workflow's terminal
// report reaches the registry only once the workflow has returned, so the
// rule above holds for every job that ends by itself. A job sealed while
// its workflow still runs (its actor died, shutdown interrupted it) keeps
// every hold until the worker reports the return, straight to the
// registry and again after a registry restart; one whose workflow has not
// returned Options.QuarantineAfter after its cancellation is quarantined:
// flagged in its snapshot and the listing, logged at error, until it
// returns or Engine.ReleaseQuarantined frees it (quarantine.go). A terminal
// job that holds nodes is never evicted. The journal keeps no such holds:
// replay releases a terminal job's holds, as no workflow runs after a
// restart.
//
// An operation's lease outlives its operation: the gRPC edge runs the
// operation under a context that ends half-way through the lease's TTL and
// releases the lease once the operation returned.
//
// Each lease is served by a NodeLock actor, handed the immutable grant
// (holder, since, expiry): it watches the actor the holder lives in and
// tells the registry when it is gone, and ends an operation's lease when
// its TTL lapses. Killing it loses nothing: the registry spawns another
// from the same grant.
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
// holds → capacity. Only jobs in flight count against the capacity limit:
// when the index is full, the oldest terminal records are evicted first
// (a batch parent with its children; never a job still holding nodes), in
// O(evicted) from a queue kept in terminal order (capacity.go), and the
// refusal names the jobs in flight by type. A batch is admitted in one
// request: the parent, then each child, before any child workflow starts.
//
// # Batches
//
// The registry keeps each batch parent's children counted by state, moved
// as each child changes (O(1) per change): reading an open parent derives
// its description from the counts and changes nothing. The parent's
// BatchParent actor is handed every child as it is sealed and builds what
// the counts cannot say (children already up to date, the failure entry of
// each failed child, its result document parsed once). When the last child
// ends, the registry asks it for the verdict and seals the parent. The
// reaper offers finished batches their verdict again as a backstop, then
// evicts expired terminal jobs, children before their parent.
//
// # Waits, crashes and shutdown
//
// A waiting caller (Engine.Wait) holds one subscription in the registry,
// kept across registry restarts and removed when the caller gives up; it
// checks every AskTimeout that the registry still knows it and subscribes
// again only if not. A request whose handling panics the registry is
// answered with messages.ErrRegistryCrashed and remembered, so the facade's
// retry of it is refused instead of crashing the registry again. A crash
// may come in the middle of a turn, after a seal's terminal events and
// before their consequences: the restarted registry then first reconciles
// (reconcile.go) the holds of ended jobs, orphaned lock actors, batch
// actors and waiters with what the store says.
//
// Cancelling a job (Engine.Cancel, CancelWith) signals its workflow, and
// for a batch parent, which has none, every child that has not ended; the
// holds stay until each records its terminal state.
//
// Shutdown (Drain) refuses new jobs and cancels every workflow's context
// with cause messages.ErrShuttingDown; a step that must not be abandoned
// half-way runs on messages.ShieldFromShutdown(ctx) and may finish within
// the drain window. When the window ends, jobs still running are sealed
// Failed "interrupted by shutdown of rmsd at stage ...", their workflows are
// stopped, and Close waits for them no longer than the window: a workflow
// that ignores its context is named in the log and left to end with the
// process, its nodes held until then.
//
// Abandon (cluster mode: the member no longer owns the rack the engine
// runs) refuses admission at once with messages.ErrNotOwner, drops the
// journal's queue without writing it, cancels every workflow with its
// cause and waits for them as Close does; it seals nothing, since the
// rack's new owner replays the journal and seals what was left running
// (abandon.go).
package actors

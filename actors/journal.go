package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// The job journal: every event that changes the durable part of the index
// (jobs and the holds of jobs; not operation leases, not shutdown) is
// appended to the store's journal before a caller can see its effect.
//
// The registry never waits for the database. It hands each turn's events
// to the journalWriter (a mutex-guarded append, numbered by a local
// sequence) and hands every reply that reveals them (an admitted job's id,
// a job's state, a finished wait) with the sequence number it depends on.
// The writer's goroutine takes everything queued, writes it in one commit
// and then sends the replies whose events are now durable: events produced
// while one write is in flight go together in the next one (group commit),
// so a 1,000-child admission costs a few rows in one commit.
//
// A commit has a deadline (Options.StoreTimeout): a store that stalls
// instead of failing counts as failed once it passes. Replies that only
// read wait for a commit at most a fifth of that deadline (readWait), then
// are sent from memory, so a stalled store does not stall job status.
//
// When a write fails the writer keeps the events, in order, and retries
// with a backoff until the store answers again. Meanwhile it is
// unavailable: the registry refuses new jobs with
// messages.ErrStoreUnavailable, replies that only read are sent from
// memory at once, and an admission whose reply was waiting is answered
// with the same error and its jobs are cancelled (their ids were never
// handed out). Once a retry succeeds the backlog is on disk and admission
// resumes.

// journalRetryMin and journalRetryMax bound the backoff between attempts
// to write the journal while the store fails.
const (
	journalRetryMin = 50 * time.Millisecond
	journalRetryMax = 2 * time.Second
)

// journalItem is one queued event, or a snapshot that replaces everything
// queued and written before it.
type journalItem struct {
	ev       messages.Event
	snapshot []messages.Event
}

// deferredReply is a reply that waits for its events to be durable.
type deferredReply struct {
	seq uint64
	to  *actor.PID
	msg any
	// failed, when set, is sent instead of msg if the store fails before
	// seq is durable (an admission's refusal; a gated job's cancellation).
	failed any
}

// failedNow turns d into the reply of a store failure: its failure
// message if it has one (an admission), else the reply from memory.
func (d deferredReply) failedNow() deferredReply {
	if d.failed != nil {
		d.msg = d.failed
	}
	return d
}

// journalWriter owns the goroutine that writes the journal.
type journalWriter struct {
	st  store.Journal
	sys *actor.ActorSystem
	log zerolog.Logger
	// writeTimeout bounds one commit; readWait (a fifth of it) is how long
	// a read's reply waits for a commit in flight.
	writeTimeout, readWait time.Duration
	// onCommit, when set, is told of every commit attempt (Options.OnCommit).
	onCommit func(time.Duration, error)

	mu      sync.Mutex
	pending []journalItem
	queued  uint64 // sequence of the last queued event
	durable uint64 // sequence of the last durable event
	waiting []deferredReply
	tail    int // events queued since the last snapshot
	failing bool
	// attempt numbers the writes; inFlight is set while one runs and
	// stalling once it has run longer than readWait.
	attempt            uint64
	inFlight, stalling bool
	// notOwner: the failing writes were refused because this process no
	// longer owns the store (store.ErrNotOwner).
	notOwner bool

	// abandoned: the engine was abandoned; nothing more is written.
	abandoned bool

	down   atomic.Bool // the last write failed
	writes atomic.Int64
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	closed bool
	// writeCtx is every write's parent; abandon cancels it, so that a
	// commit in flight is given up.
	writeCtx    context.Context
	cancelWrite context.CancelFunc
}

func newJournalWriter(st store.Journal, sys *actor.ActorSystem, log zerolog.Logger, tail int, writeTimeout time.Duration,
	onCommit func(time.Duration, error)) *journalWriter {
	w := &journalWriter{
		st: st, sys: sys, log: log, tail: tail, writeTimeout: writeTimeout, readWait: writeTimeout / 5, onCommit: onCommit,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	w.writeCtx, w.cancelWrite = context.WithCancel(context.Background())
	go w.run()
	return w
}

// add queues events and returns the sequence number of the last one.
func (w *journalWriter) add(evs []messages.Event) uint64 {
	if len(evs) == 0 {
		return w.last()
	}
	w.mu.Lock()
	if w.abandoned { // nothing more is written; the replies fail at once
		w.queued += uint64(len(evs))
		seq := w.queued
		w.mu.Unlock()
		return seq
	}
	for _, ev := range evs {
		w.pending = append(w.pending, journalItem{ev: ev})
	}
	w.queued += uint64(len(evs))
	w.tail += len(evs)
	seq := w.queued
	w.mu.Unlock()
	w.signal()
	return seq
}

// addSnapshot queues a snapshot of the whole index: once written it
// replaces the journal before it.
func (w *journalWriter) addSnapshot(evs []messages.Event) uint64 {
	w.mu.Lock()
	if w.abandoned {
		w.queued++
		seq := w.queued
		w.mu.Unlock()
		return seq
	}
	w.pending = append(w.pending, journalItem{snapshot: evs})
	w.queued++
	w.tail = 0
	seq := w.queued
	w.mu.Unlock()
	w.signal()
	return seq
}

// last returns the sequence number of the last queued event.
func (w *journalWriter) last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queued
}

// tailLen returns the number of events queued since the last snapshot.
func (w *journalWriter) tailLen() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tail
}

// isAbandoned reports whether abandon has been called.
func (w *journalWriter) isAbandoned() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.abandoned
}

// unavailable reports whether the journal's last write failed.
func (w *journalWriter) unavailable() bool { return w.down.Load() }

// reply sends d.msg once the events up to d.seq are durable: at once when
// they are, or when the store is failing or the journal is abandoned
// (reads answer from memory; an admission gets d.failed), or, for a read,
// when the commit it would wait for is stalling.
func (w *journalWriter) reply(d deferredReply) {
	w.mu.Lock()
	switch {
	case d.seq <= w.durable:
	case w.failing, w.abandoned, w.stalling && d.failed == nil:
		d = d.failedNow()
	default:
		w.waiting = append(w.waiting, d)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.send(d)
}

func (w *journalWriter) send(d deferredReply) {
	if d.to != nil {
		w.sys.Root.Send(d.to, d.msg)
	}
}

func (w *journalWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run is the writer's goroutine: it writes whatever is queued, one commit
// at a time, until close.
func (w *journalWriter) run() {
	defer close(w.done)
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
		w.flush()
		w.mu.Lock()
		finished := w.closed && len(w.pending) == 0
		w.mu.Unlock()
		if finished {
			return
		}
	}
}

// flush writes everything queued, retrying while the store fails, and
// returns when it is durable or the writer is stopping.
func (w *journalWriter) flush() {
	backoff := journalRetryMin
	var batch []journalItem
	for {
		w.mu.Lock()
		batch = append(batch, w.pending...)
		w.pending = nil
		upto := w.queued
		w.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		err := w.timedWrite(batch)
		if err == nil {
			w.writes.Add(1)
			w.durableUpTo(upto)
			return
		}
		w.fail(err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-w.stop:
			t.Stop()
			if w.isAbandoned() {
				return
			}
			w.log.Error().Err(err).Int("events", len(batch)).Msg("job journal: stopping with events not written; they will not survive a restart")
			return
		}
		backoff = min(2*backoff, journalRetryMax)
	}
}

// timedWrite runs write, answering the waiting reads from memory should
// it last longer than readWait.
func (w *journalWriter) timedWrite(batch []journalItem) error {
	w.mu.Lock()
	w.attempt++
	attempt := w.attempt
	w.inFlight = true
	w.mu.Unlock()
	stall := time.AfterFunc(w.readWait, func() { w.stalled(attempt) })
	began := time.Now()
	err := w.write(batch)
	stall.Stop()
	if w.onCommit != nil {
		w.onCommit(time.Since(began), err)
	}
	w.mu.Lock()
	w.inFlight, w.stalling = false, false
	w.mu.Unlock()
	return err
}

// stalled marks write attempt as stalling, if it still runs, and sends
// every waiting reply that only reads from memory; admissions keep
// waiting for the commit's outcome.
func (w *journalWriter) stalled(attempt uint64) {
	w.mu.Lock()
	if !w.inFlight || w.attempt != attempt {
		w.mu.Unlock()
		return
	}
	w.stalling = true
	var reads, still []deferredReply
	for _, d := range w.waiting {
		if d.failed == nil {
			reads = append(reads, d)
		} else {
			still = append(still, d)
		}
	}
	w.waiting = still
	w.mu.Unlock()
	for _, d := range reads {
		w.send(d)
	}
}

// write commits one batch: appended, or, from its last snapshot on, as a
// compaction that replaces the journal.
func (w *journalWriter) write(batch []journalItem) error {
	start := -1
	for i, it := range batch {
		if it.snapshot != nil {
			start = i
		}
	}
	var evs []messages.Event
	if start >= 0 {
		evs = append(evs, batch[start].snapshot...)
		batch = batch[start+1:]
	}
	for _, it := range batch {
		if it.snapshot == nil {
			evs = append(evs, it.ev)
		}
	}
	rows, err := encodeRows(evs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(w.writeCtx, w.writeTimeout)
	defer cancel()
	if start >= 0 {
		if len(rows) == 0 { // an empty index: one empty row replaces the journal
			rows = []store.Event{{Kind: journalKind, Data: []byte("[]")}}
		}
		_, err = w.st.CompactEvents(ctx, rows)
	} else {
		_, err = w.st.AppendEvents(ctx, rows)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("write %d journal rows: no answer from the store within %s: %w", len(rows), w.writeTimeout, err)
		}
		return fmt.Errorf("write %d journal rows: %w", len(rows), err)
	}
	return nil
}

// durableUpTo records that the events up to seq are on disk and sends the
// replies that waited for them.
func (w *journalWriter) durableUpTo(seq uint64) {
	w.mu.Lock()
	w.durable = seq
	recovered := w.failing
	w.failing, w.notOwner = false, false
	// Replies wait in arrival order, not sequence order (a read may wait
	// for an older event than an admission queued before it).
	var ready, still []deferredReply
	for _, d := range w.waiting {
		if d.seq <= seq {
			ready = append(ready, d)
		} else {
			still = append(still, d)
		}
	}
	w.waiting = still
	w.mu.Unlock()
	w.down.Store(false)
	if recovered {
		w.log.Info().Msg("job journal written again; new jobs are accepted")
	}
	for _, d := range ready {
		w.send(d)
	}
}

// fail marks the store failing and answers every waiting reply from
// memory (admissions with their failure).
func (w *journalWriter) fail(err error) {
	notOwner := errors.Is(err, store.ErrNotOwner)
	w.mu.Lock()
	if w.abandoned { // abandon answered the waiting replies; nothing to say
		w.mu.Unlock()
		return
	}
	first := !w.failing
	firstNotOwner := notOwner && !w.notOwner
	w.failing = true
	w.notOwner = w.notOwner || notOwner
	waiting := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	w.down.Store(true)
	switch {
	case firstNotOwner:
		w.log.Error().Err(err).Msg("store ownership lost: this rmsd may not write its job journal, so new jobs are refused; " +
			"it writes again only if it takes the store back with nobody else having held it, else restart it once the other rmsd is stopped")
	case first:
		w.log.Error().Err(err).Msg("job journal cannot be written; new jobs are refused until the store answers again")
	}
	for _, d := range waiting {
		w.send(d.failedNow())
	}
}

// close stops the writer once what is queued is written, or at the
// deadline (a failing store), whichever comes first. Nothing may be added
// after close.
func (w *journalWriter) close(deadline time.Time) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	w.signal()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
	close(w.stop)
	<-w.done
	w.cancelWrite()
}

// abandon stops the writer for good without writing what is queued: the
// engine's member no longer owns what the journal records, and its writes
// would be refused. A commit in flight is given up, the queue is dropped,
// every waiting reply is sent its failure (an admission's refusal), and
// every later reply fails at once. It returns once the writer's goroutine
// has returned.
func (w *journalWriter) abandon() {
	w.mu.Lock()
	w.abandoned, w.failing, w.closed = true, true, true
	dropped := len(w.pending)
	w.pending = nil
	waiting := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	w.down.Store(true)
	w.cancelWrite()
	for _, d := range waiting {
		w.send(d.failedNow())
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	if dropped > 0 {
		w.log.Warn().Int("items", dropped).Msg("job journal abandoned with changes not written: the rack's new owner replays what was written")
	}
}

// errStoreDown is the admission refusal while the journal fails, built
// once: every admission names it as its answer should the journal fail.
var errStoreDown = fmt.Errorf("job store unavailable: rmsd cannot write its job journal, so new jobs are refused until the store answers again; job status reads still answer: %w", messages.ErrStoreUnavailable)

// errJournal marks a journal that could not be read at start.
var errJournal = errors.New("jobs: job journal unreadable")

package audit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/store"
)

// Defaults of Options.
const (
	DefaultQueueSize  = 1024
	DefaultPruneEvery = time.Hour
	// maxBatch bounds the records one store write carries.
	maxBatch = 128
)

// Options configure a Recorder.
type Options struct {
	// Stream is the audit log stream: every record is written to it as one
	// line at info, with "stream":"audit".
	Stream zerolog.Logger
	// Log is where the recorder reports its own trouble (dropped records,
	// store errors, prunes): the daemon's log.
	Log zerolog.Logger
	// Store keeps the records; nil keeps them in the stream only.
	Store store.AuditLog
	// QueueSize bounds the records waiting for the store
	// (DefaultQueueSize when zero); one more is dropped and counted.
	QueueSize int
	// Retention is how long the store keeps a record; zero keeps them
	// forever.
	Retention time.Duration
	// PruneEvery is how often records past Retention are deleted
	// (DefaultPruneEvery when zero); the first prune runs at once.
	PruneEvery time.Duration
	// Now stamps records without a time; nil means time.Now.
	Now func() time.Time
}

// Recorder writes audit records to the stream and, asynchronously, to the
// store. Its goroutines run until Close. It is safe for concurrent use.
type Recorder struct {
	stream, log zerolog.Logger
	st          store.AuditLog
	now         func() time.Time
	queue       chan store.AuditRecord
	dropped     atomic.Uint64
	stored      atomic.Uint64

	stop     chan struct{} // closed by Close: drain the queue and end
	stopOnce sync.Once
	ctx      context.Context // the store calls'; cancelled when Close gives up waiting
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// New starts a Recorder.
func New(opts Options) *Recorder {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.PruneEvery <= 0 {
		opts.PruneEvery = DefaultPruneEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{
		stream: opts.Stream.With().Str("stream", "audit").Logger(),
		log:    opts.Log,
		st:     opts.Store,
		now:    opts.Now,
		queue:  make(chan store.AuditRecord, opts.QueueSize),
		stop:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}
	if r.st != nil {
		r.wg.Add(1)
		go r.write()
		if opts.Retention > 0 {
			r.wg.Add(1)
			go r.prune(opts.Retention, opts.PruneEvery)
		}
	}
	return r
}

// Record writes rec to the stream and queues it for the store, without
// waiting for either: a full queue drops it for the store (it is in the
// stream), counted by Dropped and reported at warn. A Recorder that is
// closed writes the stream only.
func (r *Recorder) Record(rec store.AuditRecord) {
	if rec.Time.IsZero() {
		rec.Time = r.now()
	}
	r.logRecord(rec)
	if r.st == nil {
		return
	}
	select {
	case <-r.stop:
		r.drop(rec, "the audit recorder is closed")
		return
	default:
	}
	select {
	case r.queue <- rec:
	default:
		r.drop(rec, "the store queue is full")
	}
}

// Dropped is how many records never reached the store: the queue was
// full, the recorder closed, or the store refused them.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Stored is how many records the store has written.
func (r *Recorder) Stored() uint64 { return r.stored.Load() }

// Close stops taking records for the store, writes those queued until ctx
// ends (then abandons the rest, counted as dropped), stops pruning and
// waits for its goroutines.
func (r *Recorder) Close(ctx context.Context) {
	r.stopOnce.Do(func() { close(r.stop) })
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		r.cancel()
		<-done
	}
	r.cancel()
	for {
		select {
		case rec := <-r.queue: // queued as Close began
			r.drop(rec, "the audit recorder closed")
		default:
			return
		}
	}
}

func (r *Recorder) drop(rec store.AuditRecord, why string) {
	n := r.dropped.Add(1)
	r.log.Warn().Str("rpc", rec.Method).Str("caller", rec.Caller).Uint64("dropped_total", n).
		Msgf("audit record not stored: %s (it is in the audit log stream)", why)
}

// logRecord writes rec as one line of the stream.
func (r *Recorder) logRecord(rec store.AuditRecord) {
	ev := r.stream.Info().Time("at", rec.Time).Str("caller", rec.Caller).Bool("caller_verified", rec.CallerVerified)
	if rec.CallerVerified {
		ev = ev.Str("caller_subject", rec.CallerSubject).Str("caller_cn", rec.CallerCN).
			Strs("caller_ou", rec.CallerOU).Strs("caller_dns", rec.CallerDNS).Strs("caller_uris", rec.CallerURIs)
	}
	if rec.CallerAddr != "" {
		ev = ev.Str("caller_addr", rec.CallerAddr)
	}
	ev = ev.Str("rpc", rec.Method)
	if len(rec.RackIDs) > 0 {
		ev = ev.Strs("rack_ids", rec.RackIDs)
	}
	if len(rec.NodeIDs) > 0 {
		ev = ev.Strs("node_ids", rec.NodeIDs)
	}
	if len(rec.JobIDs) > 0 {
		ev = ev.Strs("job_ids", rec.JobIDs)
	}
	ev = ev.Str("outcome", rec.Outcome)
	if rec.Reason != "" {
		ev = ev.Str("reason", rec.Reason)
	}
	ev.Msg("audit")
}

// write stores queued records in batches until stop, then the rest of the
// queue, until the context ends.
func (r *Recorder) write() {
	defer r.wg.Done()
	for {
		select {
		case rec := <-r.queue:
			r.store(r.batch(rec))
		case <-r.stop:
			for {
				select {
				case rec := <-r.queue:
					r.store(r.batch(rec))
				default:
					return
				}
			}
		}
	}
}

// batch is first and whatever else is already queued, up to maxBatch.
func (r *Recorder) batch(first store.AuditRecord) []store.AuditRecord {
	out := []store.AuditRecord{first}
	for len(out) < maxBatch {
		select {
		case rec := <-r.queue:
			out = append(out, rec)
		default:
			return out
		}
	}
	return out
}

func (r *Recorder) store(recs []store.AuditRecord) {
	if r.ctx.Err() != nil {
		r.dropAll(recs, errors.New("the audit recorder was closed before the store answered"))
		return
	}
	if _, err := r.st.AppendAudit(r.ctx, recs); err != nil {
		r.dropAll(recs, err)
		return
	}
	r.stored.Add(uint64(len(recs)))
}

func (r *Recorder) dropAll(recs []store.AuditRecord, err error) {
	n := r.dropped.Add(uint64(len(recs)))
	r.log.Warn().Err(err).Int("records", len(recs)).Uint64("dropped_total", n).
		Msg("audit records not stored (they are in the audit log stream)")
}

// prune deletes the records past retention now and every interval, until
// stop.
func (r *Recorder) prune(retention, every time.Duration) {
	defer r.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := r.st.PruneAudit(r.ctx, r.now().Add(-retention))
		switch {
		case err != nil && r.ctx.Err() == nil:
			r.log.Warn().Err(err).Msg("audit records past their retention not pruned; retrying at the next prune")
		case n > 0:
			r.log.Info().Int64("records", n).Dur("retention_ms", retention).Msg("audit records past their retention pruned")
		}
		select {
		case <-t.C:
		case <-r.stop:
			return
		}
	}
}

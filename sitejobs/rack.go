package sitejobs

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
)

// Engine is what the console reads of a job engine (*actors.Engine
// implements it; so does Site, for the whole site).
type Engine interface {
	List(ctx context.Context, q messages.ListJobs) (messages.ListJobsReply, error)
	Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error)
	Holds(ctx context.Context) ([]messages.Hold, error)
	Subscribe(buffer int) *actors.Subscription
}

const (
	// logKeep is how many changes a rack's log keeps for the members
	// reading it: a reader further behind is reset.
	logKeep = 4096
	// logFeedBuffer is the log's subscription buffer to its engine.
	logFeedBuffer = 4096
	// maxChangesPerRead caps one answer's changes.
	maxChangesPerRead = 1024
	// maxWait caps the wait of one long poll.
	maxWait = 30 * time.Second
)

// Rack answers, on the member owning a rack, what other members read of
// the rack's jobs (rackpb.JobsRead), from the rack's engine and a change
// log fed by the engine's change feed from Open on. The log follows the
// engine until the engine closes.
type Rack struct {
	engine Engine
	log    *changeLog
	done   chan struct{}
}

// OpenRack starts following e's changes.
func OpenRack(e Engine) *Rack {
	r := &Rack{engine: e, log: newChangeLog(logKeep), done: make(chan struct{})}
	sub := e.Subscribe(logFeedBuffer)
	go r.follow(sub)
	return r
}

// follow copies the engine's changes into the log until the engine
// closes; a subscription the feed dropped is renewed under a new log id.
func (r *Rack) follow(sub *actors.Subscription) {
	defer close(r.done)
	for {
		for c := range sub.C() {
			r.log.add(changeRecord(c))
		}
		if !sub.Dropped() {
			r.log.close()
			return
		}
		sub = r.engine.Subscribe(logFeedBuffer)
		r.log.restart()
	}
}

// Stopped is closed once the engine closed and the log with it.
func (r *Rack) Stopped() <-chan struct{} { return r.done }

// Read answers one read under ctx.
func (r *Rack) Read(ctx context.Context, read *rackpb.JobsRead) *rackpb.JobsReadReply {
	switch q := read.GetRead().(type) {
	case *rackpb.JobsRead_List:
		l, err := r.engine.List(ctx, messages.ListJobs{TopLevel: q.List.GetTopLevel()})
		if err != nil {
			return failed(err)
		}
		return &rackpb.JobsReadReply{Jobs: jobRecords(l.Jobs)}
	case *rackpb.JobsRead_Get:
		snaps, err := r.engine.Get(ctx, q.Get.GetJobId(), q.Get.GetIncludeChildren())
		if err != nil {
			return failed(err)
		}
		return &rackpb.JobsReadReply{Jobs: jobRecords(snaps)}
	case *rackpb.JobsRead_Holds:
		holds, err := r.engine.Holds(ctx)
		if err != nil {
			return failed(err)
		}
		out := &rackpb.JobsReadReply{Holds: make([]*rackpb.HoldRecord, len(holds))}
		for i, h := range holds {
			out.Holds[i] = holdRecord(h)
		}
		return out
	case *rackpb.JobsRead_Changes:
		wait := min(time.Duration(q.Changes.GetWaitMs())*time.Millisecond, maxWait)
		changes, id, seq, reset, closed := r.log.since(ctx, q.Changes.GetLog(), q.Changes.GetSeq(), maxChangesPerRead, wait)
		if closed {
			return failed(messages.ErrEngineClosed)
		}
		return &rackpb.JobsReadReply{Changes: changes, Log: id, Seq: seq, CursorLost: reset}
	default:
		return &rackpb.JobsReadReply{Code: uint32(codes.InvalidArgument), Message: "jobs read: no read named"}
	}
}

// failed is the answer to a read the engine refused.
func failed(err error) *rackpb.JobsReadReply {
	code := codes.Unavailable
	if errors.Is(err, messages.ErrJobNotFound) {
		code = codes.NotFound
	}
	return &rackpb.JobsReadReply{Code: uint32(code), Message: err.Error()}
}

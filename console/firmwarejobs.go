package console

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

const (
	// firmwareJobsBuffer is the follower's buffer of job engine changes.
	firmwareJobsBuffer = 1024
	// firmwareJobsAsk bounds one question to the job registry.
	firmwareJobsAsk = 10 * time.Second
)

// FirmwareJobs follows the job engine's change feed and names the node of
// every firmware job that ends, so that the console's refresher reads that
// node's firmware inventory again (powerview.Stale) and the rack page shows
// the versions the job left. A firmware job is an UpdateFirmware job, a
// child of a firmware batch (BatchUpdateFirmware, BatchUpdateFirmwareByNodeType,
// ApplyStoredFirmwareObject, ApplyFirmwareObject: parents of type
// firmware_update) or a child of a switch system image update. Failed ones
// count too: a job may fail after changing some components.
type FirmwareJobs struct {
	// Jobs is the job engine followed.
	Jobs *actors.Engine
	// Ended is told the node of each firmware job that ended, on the
	// follower's goroutine: it must not wait long (mark and return).
	Ended func(ref hw.Ref)
	// Buffer is the feed subscription's buffer (firmwareJobsBuffer when
	// 0).
	Buffer int
	// Log receives drops and failures to ask the registry.
	Log zerolog.Logger
}

// Start subscribes to the feed, so that every firmware job that ends
// after Start returns is named, and follows it on a goroutine of its own
// until ctx ends or the engine closes; done is closed when that goroutine
// has ended. When the feed drops it (it fell behind), it subscribes again,
// lists the jobs and names the nodes of the firmware jobs that ended since
// the newest job change it had read, so no ended job is missed (some may
// be named twice).
func (f FirmwareJobs) Start(ctx context.Context) (done <-chan struct{}) {
	if f.Buffer <= 0 {
		f.Buffer = firmwareJobsBuffer
	}
	w := &firmwareWatch{FirmwareJobs: f, parents: map[string]messages.JobType{}}
	sub := f.Jobs.Subscribe(f.Buffer)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			dropped := w.follow(ctx, sub)
			sub.Close()
			if !dropped || ctx.Err() != nil {
				return
			}
			f.Log.Warn().Int("buffer", f.Buffer).Msg("firmware job follower fell behind the job feed; listing the jobs to catch up")
			sub = f.Jobs.Subscribe(f.Buffer)
			w.resync(ctx)
		}
	}()
	return ended
}

// firmwareWatch is one follower's state.
type firmwareWatch struct {
	FirmwareJobs
	// parents are the open top-level jobs of a firmware type, by id, so a
	// child's type is known without asking the registry.
	parents map[string]messages.JobType
	// since is the newest UpdatedAt of the job changes read: what a drop
	// lost came after it.
	since time.Time
}

// follow reads sub until ctx ends (false) or sub closes (whether it was
// dropped).
func (w *firmwareWatch) follow(ctx context.Context, sub *actors.Subscription) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case ch, ok := <-sub.C():
			if !ok {
				return sub.Dropped()
			}
			w.note(ctx, ch)
		}
	}
}

// note handles one change.
func (w *firmwareWatch) note(ctx context.Context, ch messages.JobChange) {
	if ch.Evicted != "" {
		delete(w.parents, ch.Evicted)
	}
	j := ch.Job
	if j == nil {
		return
	}
	if j.UpdatedAt.After(w.since) {
		w.since = j.UpdatedAt
	}
	if j.ParentID == "" && j.NodeID == "" && isFirmwareType(j.Type) {
		if j.IsTerminal() {
			delete(w.parents, j.ID)
		} else {
			w.parents[j.ID] = j.Type
		}
		return
	}
	if j.IsTerminal() && j.NodeID != "" && w.isFirmware(ctx, *j) {
		w.Ended(hw.Ref{RackID: j.RackID, NodeID: j.NodeID})
	}
}

// isFirmware reports whether a job on a node is a firmware job: its own
// type, or for a batch child (untyped), its parent's.
func (w *firmwareWatch) isFirmware(ctx context.Context, j messages.JobSnapshot) bool {
	if j.ParentID == "" {
		return isFirmwareType(j.Type)
	}
	if j.Type != messages.TypeNone { // a reservation child: a cold reboot's
		return false
	}
	if t, ok := w.parents[j.ParentID]; ok {
		return isFirmwareType(t)
	}
	// A parent sealed in the same registry turn as its last child, or one
	// admitted while the feed was dropped: ask.
	ctx, cancel := context.WithTimeout(ctx, firmwareJobsAsk)
	defer cancel()
	snaps, err := w.Jobs.Get(ctx, j.ParentID, false)
	if err != nil || len(snaps) == 0 {
		w.Log.Debug().Err(err).Str("job_id", j.ID).Str("parent_id", j.ParentID).Msg("firmware job follower: parent not found")
		return false
	}
	return isFirmwareType(snaps[0].Type)
}

// resync lists the jobs after a drop: the open firmware parents are
// remembered again and the nodes of the firmware jobs that ended since
// the last change read are named.
func (w *firmwareWatch) resync(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, firmwareJobsAsk)
	defer cancel()
	listed, err := w.Jobs.List(ctx, messages.ListJobs{})
	if err != nil {
		w.Log.Warn().Err(err).Msg("firmware job follower could not list the jobs; versions may be stale until the next firmware job")
		return
	}
	types := map[string]messages.JobType{}
	clear(w.parents)
	for _, j := range listed.Jobs {
		if j.ParentID == "" {
			types[j.ID] = j.Type
			if j.NodeID == "" && isFirmwareType(j.Type) && !j.IsTerminal() {
				w.parents[j.ID] = j.Type
			}
		}
	}
	since := w.since
	for _, j := range listed.Jobs {
		if j.UpdatedAt.After(w.since) {
			w.since = j.UpdatedAt
		}
		if !j.IsTerminal() || j.NodeID == "" || j.UpdatedAt.Before(since) {
			continue
		}
		t := j.Type
		if j.ParentID != "" {
			if j.Type != messages.TypeNone {
				continue
			}
			t = types[j.ParentID]
		}
		if isFirmwareType(t) {
			w.Ended(hw.Ref{RackID: j.RackID, NodeID: j.NodeID})
		}
	}
}

// isFirmwareType reports whether jobs of type t change a node's firmware.
func isFirmwareType(t messages.JobType) bool {
	return t == messages.TypeFirmwareUpdate || t == messages.TypeSwitchSystemImageUpdate
}

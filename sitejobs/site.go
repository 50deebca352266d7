package sitejobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/feed"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// Cluster delivers a read to the rack's owner (*member.Member).
type Cluster interface {
	ReadJobs(ctx context.Context, read *rackpb.JobsRead) (*rackpb.JobsReadReply, error)
}

// Store is what Site reads of the shared store: the registered racks,
// each job's rack, the cluster parents.
type Store interface {
	ListRacks(ctx context.Context) ([]store.RackRecord, error)
	JobRack(ctx context.Context, jobID string) (string, error)
	ClusterParent(ctx context.Context, id string) (store.ClusterParent, error)
	ListClusterParents(ctx context.Context, limit int) ([]store.ClusterParent, error)
}

// Defaults of Config.
const (
	DefaultReadTimeout = 5 * time.Second
	DefaultWait        = 10 * time.Second
	DefaultRetry       = time.Second
	DefaultRackRefresh = 5 * time.Second
	// readers bounds the reads Site sends at once for one question.
	readers = 16
)

// Config is a Site's setting; zero durations take the defaults.
type Config struct {
	Store Store
	Log   zerolog.Logger
	// ReadTimeout bounds one read of a rack's owner (a long poll: on top
	// of Wait).
	ReadTimeout time.Duration
	// Wait is how long an owner holds a read of its rack's changes when
	// there is none: the idle cost is one read per rack per Wait.
	Wait time.Duration
	// Retry is the pause after a rack's owner did not answer a poll.
	Retry time.Duration
	// RackRefresh is how often the registered racks are read again.
	RackRefresh time.Duration
}

// Site is the whole site's jobs as one member's console sees them: every
// read asks the racks' owners, and the change feed follows every rack's
// change log. It implements Engine.
type Site struct {
	cfg Config

	mu      sync.Mutex
	cluster Cluster
	cancel  context.CancelFunc
	done    chan struct{}
	// ended are the cluster parents List found ended, by id
	// (parentRows).
	ended map[string]messages.JobSnapshot

	feed feed.Feed[messages.JobChange]
	// followed, when set (tests), is told each rack whose change log a
	// poller first reached.
	followed func(rackID string)
}

// New returns a Site that answers once Start has given it the cluster.
func New(cfg Config) *Site {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultRetry
	}
	if cfg.RackRefresh <= 0 {
		cfg.RackRefresh = DefaultRackRefresh
	}
	return &Site{cfg: cfg}
}

// errNotJoined answers reads before Start.
var errNotJoined = errors.New("sitejobs: this member has not joined the cluster yet")

// UnreachableError reports the racks whose owners did not answer a read
// of every rack; what the others answered is returned with it.
type UnreachableError struct {
	Racks []string
	// Err is the first rack's failure.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the owners of racks %s did not answer: %v", strings.Join(e.Racks, ", "), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable names the racks not read.
func (e *UnreachableError) Unreachable() []string { return e.Racks }

func (s *Site) clusterOf() Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cluster
}

// read asks rackID's owner, within ReadTimeout; an answer other than OK
// is an error (messages.ErrJobNotFound for NOT_FOUND).
func (s *Site) read(ctx context.Context, rackID string, read *rackpb.JobsRead) (*rackpb.JobsReadReply, error) {
	return s.readWithin(ctx, s.cfg.ReadTimeout, rackID, read)
}

// readWithin is read within timeout.
func (s *Site) readWithin(ctx context.Context, timeout time.Duration, rackID string, read *rackpb.JobsRead) (*rackpb.JobsReadReply, error) {
	c := s.clusterOf()
	if c == nil {
		return nil, errNotJoined
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	read.RackId = rackID
	reply, err := c.ReadJobs(ctx, read)
	switch {
	case err != nil:
		return nil, &rackError{rackID, err}
	case codes.Code(reply.GetCode()) == codes.NotFound:
		return nil, &rackError{rackID, fmt.Errorf("%s: %w", reply.GetMessage(), messages.ErrJobNotFound)}
	case reply.GetCode() != 0:
		return nil, &rackError{rackID, fmt.Errorf("%s (%s)", reply.GetMessage(), codes.Code(reply.GetCode()))}
	}
	return reply, nil
}

// rackError is a read of a rack that its owner did not answer, or
// refused.
type rackError struct {
	rack string
	err  error
}

func (e *rackError) Error() string { return "rack " + e.rack + ": " + e.err.Error() }

func (e *rackError) Unwrap() error { return e.err }

// everyRack asks every registered rack's owner (only rackID's when it is
// set) at once, readers at a time, and returns the answers of those that
// answered, by rack, with an UnreachableError naming the others (nil when
// all answered); an error alone when the racks could not be listed or no
// rack answered.
func (s *Site) everyRack(ctx context.Context, rackID string, ask func() *rackpb.JobsRead) (map[string]*rackpb.JobsReadReply, error) {
	racks := []store.RackRecord{{RackID: rackID}}
	if rackID == "" {
		var err error
		if racks, err = s.cfg.Store.ListRacks(ctx); err != nil {
			return nil, fmt.Errorf("sitejobs: list the racks: %w", err)
		}
	}
	replies := make(map[string]*rackpb.JobsReadReply, len(racks))
	missed := &UnreachableError{}
	s.fanOut(len(racks), func(i int) func() {
		rackID := racks[i].RackID
		reply, err := s.read(ctx, rackID, ask())
		return func() {
			if err != nil {
				missed.Racks = append(missed.Racks, rackID)
				if missed.Err == nil {
					missed.Err = err
				}
				return
			}
			replies[rackID] = reply
		}
	})
	switch {
	case len(missed.Racks) == 0:
		return replies, nil
	case len(replies) == 0:
		return nil, missed.Err
	}
	slices.Sort(missed.Racks)
	return replies, missed
}

// List implements Engine: every rack's jobs q selects, newest first,
// with the newest cluster parents (at most ParentRows), each aggregated
// from its racks' batches, as jobs of their own. Of q, RackID (only that
// rack is asked, and no cluster parent listed), TopLevel and Limit are
// applied; the console asks no other filter.
func (s *Site) List(ctx context.Context, q messages.ListJobs) (messages.ListJobsReply, error) {
	replies, err := s.everyRack(ctx, q.RackID, func() *rackpb.JobsRead {
		return &rackpb.JobsRead{Read: &rackpb.JobsRead_List{List: &rackpb.ListRackJobs{TopLevel: q.TopLevel}}}
	})
	if replies == nil {
		return messages.ListJobsReply{}, err
	}
	var out messages.ListJobsReply
	for _, r := range replies {
		out.Jobs = append(out.Jobs, snapshots(r.GetJobs())...)
	}
	if q.RackID == "" {
		parents, missed, perr := s.parentRows(ctx, q.Limit)
		if perr != nil {
			return messages.ListJobsReply{}, perr
		}
		out.Jobs = append(out.Jobs, parents...)
		err = alsoUnreachable(err, missed)
	}
	slices.SortFunc(out.Jobs, func(a, b messages.JobSnapshot) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if q.Limit > 0 && len(out.Jobs) > q.Limit {
		out.Jobs = out.Jobs[:q.Limit]
		last := out.Jobs[len(out.Jobs)-1]
		out.Next = messages.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, err
}

// Holds implements Engine: every rack's holds.
func (s *Site) Holds(ctx context.Context) ([]messages.Hold, error) {
	replies, err := s.everyRack(ctx, "", func() *rackpb.JobsRead {
		return &rackpb.JobsRead{Read: &rackpb.JobsRead_Holds{Holds: &rackpb.RackHolds{}}}
	})
	if replies == nil {
		return nil, err
	}
	var out []messages.Hold
	for _, r := range replies {
		for _, h := range r.GetHolds() {
			out = append(out, hold(h))
		}
	}
	return out, err
}

// Get implements Engine: the job from its rack's owner (the store knows
// each job's rack), or a cluster parent aggregated from its racks'
// batches; messages.ErrJobNotFound for an id neither knows.
func (s *Site) Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	rack, err := s.cfg.Store.JobRack(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.parent(ctx, id, includeChildren)
	case err != nil:
		return nil, fmt.Errorf("sitejobs: job %s's rack: %w", id, err)
	}
	return s.get(ctx, rack, id, includeChildren)
}

// get reads a job of rack from its owner.
func (s *Site) get(ctx context.Context, rack, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	reply, err := s.read(ctx, rack, &rackpb.JobsRead{Read: &rackpb.JobsRead_Get{Get: &rackpb.GetRackJob{JobId: id, IncludeChildren: includeChildren}}})
	if err != nil {
		return nil, err
	}
	if len(reply.GetJobs()) == 0 {
		return nil, fmt.Errorf("rack %s: job %s: %w", rack, id, messages.ErrJobNotFound)
	}
	return snapshots(reply.GetJobs()), nil
}

// Subscribe implements Engine: the site's changes, as every rack's owner
// logs them, after at most one poll's delay. A rack whose log lost
// changes (it changed owner, or a reader fell behind) drops every
// subscription, as the engine's feed drops a reader that fell behind.
func (s *Site) Subscribe(buffer int) *actors.Subscription {
	if buffer <= 0 {
		buffer = actors.DefaultFeedBuffer
	}
	return s.feed.Subscribe(buffer)
}

var _ Engine = (*Site)(nil)

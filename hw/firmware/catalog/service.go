package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/feed"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/store"
)

// Store is what the service needs of the store (store.Store implements
// it): the catalog, and a transaction to add an object and make it the
// default together.
type Store interface {
	store.Catalog
	Update(ctx context.Context, fn func(tx store.Tx) error) error
}

// Downloader fetches artifacts (*download.Downloader implements it).
type Downloader interface {
	// Check refuses artifacts that cannot be fetched at all, before
	// anything is stored.
	Check(artifacts []manifest.Artifact) error
	// Fetch fetches one artifact into dir, verified; its error is the
	// artifact's failure (an *download.ArtifactError when it got that far).
	// Cancelling ctx stops it.
	Fetch(ctx context.Context, dir string, a manifest.Artifact, token hw.Secret) (download.Result, error)
}

// Options configure a Service.
type Options struct {
	Store      Store
	Downloader Downloader
	// Dir is [workflows] firmware_dir; objects are cached below
	// Dir/objects.
	Dir string
	// Member is the cluster member id ([cluster] member_id), "" for a
	// single rmsd. Members share Dir and the store, so a member touches
	// only what is its own at Open: the temporary download files tagged
	// with its id (the Downloader must write for the same Member), its
	// temporary caches (Dir/ephemeral/<member>/) and the interrupted
	// downloads of the objects it added, or took over from a member that
	// is gone (ClaimAfter). It must be one directory name.
	Member string
	// ClaimAfter is, in cluster mode, how long another member's
	// interrupted download must have gone without a heartbeat, with that
	// member's row in the store unwritten as long, before this member
	// takes it over (takeover.go); zero means DefaultClaimAfter. The
	// member layer gives it from the membership timeout
	// (member.DownloadClaimAfter).
	ClaimAfter time.Duration
	// ClaimTick, when set, drives the heartbeat of this member's downloads
	// and the takeover of other members' instead of a ticker every
	// ClaimAfter/claimBeats (tests); each receive runs one pass.
	ClaimTick <-chan time.Time
	// Manifest tunes how manifests are resolved (multi-package node types).
	Manifest manifest.Options
	Logger   zerolog.Logger
}

// objectsDir is the directory below firmware_dir that holds one cache
// directory per object.
const objectsDir = "objects"

// Service is the firmware catalog. It is safe for concurrent use.
type Service struct {
	store  Store
	dl     Downloader
	dir    string // firmware_dir
	member string // the cluster member id, "" for a single rmsd
	mopts  manifest.Options
	log    zerolog.Logger
	// claimAfter is Options.ClaimAfter or its default (cluster mode).
	claimAfter time.Duration

	// base is the parent of every background context; Close cancels it.
	base       context.Context
	cancelBase context.CancelCauseFunc
	wg         sync.WaitGroup

	// serial orders Add and Delete, so that a delete never races the
	// start of the download of the object it removes, and a re-add never
	// shares a cache directory with the download it replaces.
	serial sync.Mutex

	mu     sync.Mutex
	closed bool
	jobs   map[string]*job // background work, by object id
	// manifests are the stored objects' parsed manifests, by object id,
	// so that a read parses a manifest once, not at every Get and List.
	manifests map[string]parsedManifest

	// feed tells subscribers of every change recorded (Subscribe).
	feed feed.Feed[Change]
}

// parsedManifest is an object's manifest and the ConfigJSON it was parsed
// from: an object of the same id with another manifest is parsed anew.
type parsedManifest struct {
	config string
	m      *manifest.Manifest
}

// job is the background work on one object: its download or its
// re-verification after a restart.
type job struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Open starts the catalog: it removes the temporary files interrupted
// downloads of this member (or single rmsd) left in firmware_dir and its
// leftover temporary caches (run it before this member downloads
// anything there), and starts re-verifying every object a restart
// interrupted whose download was this member's, and, in cluster mode,
// those it takes over from members that are gone, which it goes on doing
// until Close (see the package documentation). ctx bounds Open only.
func Open(ctx context.Context, o Options) (*Service, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("catalog: no store")
	case o.Downloader == nil:
		return nil, errors.New("catalog: no downloader")
	case o.Dir == "":
		return nil, errors.New("catalog: no firmware directory")
	case o.Member == "." || o.Member == ".." || strings.ContainsAny(o.Member, "/\\\x00"):
		return nil, fmt.Errorf("catalog: member id %q cannot name a directory", o.Member)
	}
	s := &Service{store: o.Store, dl: o.Downloader, dir: o.Dir, member: o.Member, mopts: o.Manifest, log: o.Logger,
		jobs: map[string]*job{}, manifests: map[string]parsedManifest{}}
	s.base, s.cancelBase = context.WithCancelCause(context.Background())
	if n, err := download.ReapTempFiles(o.Dir, o.Member); err != nil {
		s.log.Warn().Err(err).Str("firmware_dir", o.Dir).Int("removed", n).Msg("could not remove every leftover temporary download file")
	} else if n > 0 {
		s.log.Info().Str("firmware_dir", o.Dir).Int("removed", n).Msg("removed leftover temporary download files")
	}
	if n, err := reapEphemeral(s.ephemeralRoot(), o.Member == ""); err != nil {
		s.log.Warn().Err(err).Int("removed", n).Msg("could not remove every leftover temporary firmware cache")
	} else if n > 0 {
		s.log.Info().Int("removed", n).Msg("removed temporary firmware caches an earlier run left behind")
	}
	objs, err := o.Store.ListFirmwareObjects(ctx, store.ObjectFilter{})
	if err != nil {
		s.cancelBase(ErrClosed)
		return nil, fmt.Errorf("catalog: read the firmware objects: %w", err)
	}
	var others []store.FirmwareObject
	for _, obj := range objs {
		switch {
		case !interrupted(obj):
		case s.downloadedHere(obj):
			s.start(obj.ID, func(ctx context.Context) { s.reverify(ctx, obj) })
		default:
			others = append(others, obj)
		}
	}
	if s.member != "" {
		s.claimAfter = o.ClaimAfter
		if s.claimAfter <= 0 {
			s.claimAfter = DefaultClaimAfter
		}
		s.beat(ctx)
		if left := s.takeOver(ctx, others); len(left) > 0 {
			s.log.Info().Strs("objects", left).Dur("claim_after_ms", s.claimAfter).
				Msg("firmware objects other cluster members download are left to them while they are at work; one quiet for claim_after is taken over")
		}
		s.watchClaims(o.ClaimTick)
	}
	return s, nil
}

// Close stops the service: new downloads are refused, running ones are
// cancelled (their objects stay unavailable, to be re-verified by the next
// Open, or taken over by another member), the heartbeat and takeover
// passes stop, and Close returns once every background goroutine has ended,
// with every subscription closed. Calls after the first return at once.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancelBase(ErrClosed)
	s.wg.Wait()
	s.feed.Close()
}

// start runs fn in a goroutine the service owns, as the background work on
// object id, unless the service is closed. fn must return soon after its
// context ends.
func (s *Service) start(id string, fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	ctx, cancel := context.WithCancelCause(s.base)
	j := &job{cancel: cancel, done: make(chan struct{})}
	s.jobs[id] = j
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(j.done)
		defer cancel(nil)
		defer s.forget(id, j)
		fn(ctx)
	}()
	return true
}

// forget drops a finished job from the index.
func (s *Service) forget(id string, j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs[id] == j {
		delete(s.jobs, id)
	}
}

// stop cancels the background work on object id, if any, and waits for
// it to end.
func (s *Service) stop(id string, cause error) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		return
	}
	j.cancel(cause)
	<-j.done
}

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// objectsRoot is the directory holding the objects' cache directories.
func (s *Service) objectsRoot() string { return filepath.Join(s.dir, objectsDir) }

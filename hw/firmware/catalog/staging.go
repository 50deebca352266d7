package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// A Staging is the temporary cache of one inline apply
// (ApplyFirmwareObject, ApplySwitchSystemImage): a fresh directory,
// <firmware_dir>/ephemeral/<id>-<uuid> (ephemeral/<member id>/<id>-<uuid>
// on a cluster member), and the artifacts the apply's
// child jobs need, each downloaded at most once however many children
// need it. Prepare makes it without contacting any artifact server, so
// the RPC answers at once; the downloads run inside the jobs (Await), as
// upstream's run_apply_firmware_object_job downloads in its stage 0.
//
// No goroutine of its own fetches anything: a fetch runs on the goroutine
// of a child that awaits the artifact, so it ends with that child's
// workflow. While one child fetches an artifact the others that need it
// wait; should the fetching child be cancelled, one of them takes the
// download over. A failure (an HTTP error, a checksum mismatch) is final
// for the apply: every child awaiting that artifact gets it.
type Staging struct {
	svc   *Service
	id    string
	dir   string
	token hw.Secret

	mu   sync.Mutex
	arts map[string]*stagedArtifact
}

// stagedArtifact is one artifact of a Staging.
type stagedArtifact struct {
	art   manifest.Artifact
	state stageState
	err   error // when failed
	// changed is closed, and replaced, each time state changes.
	changed chan struct{}
}

type stageState int

const (
	stageIdle     stageState = iota // nobody fetches it (yet, or any more)
	stageFetching                   // a child fetches it
	stageReady                      // cached and verified
	stageFailed                     // its download failed; err says why
)

// Prepare validates what an inline apply's downloads need without any
// network I/O (the access token; the names, which m must have; local file
// sources, as Check does) and creates the staging directory. The caller
// removes Dir once no job uses it (a batch cleanup plan), or at once when
// no job was admitted. Refusals match ErrInvalid; a closed service
// ErrClosed.
func (s *Service) Prepare(m *manifest.Manifest, names []string, token hw.Secret) (*Staging, error) {
	if s.isClosed() {
		return nil, &Error{Kind: ErrClosed, Msg: "rmsd is shutting down"}
	}
	tok := download.AccessToken(token.Reveal())
	if err := checkAccessToken(tok); err != nil {
		return nil, err
	}
	arts, err := pick(m, names)
	if err != nil {
		return nil, err
	}
	if err := s.dl.Check(arts); err != nil {
		return nil, invalid(fmt.Errorf("config_json: an artifact cannot be fetched: %w", err))
	}
	root := s.ephemeralRoot()
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("catalog: create %s: %w", root, err)
	}
	dir := filepath.Join(root, m.ID+"-"+uuid.NewString())
	if err := os.Mkdir(dir, 0o750); err != nil {
		return nil, fmt.Errorf("catalog: create the temporary cache of %s: %w", m.ID, err)
	}
	st := &Staging{svc: s, id: m.ID, dir: dir, token: tok, arts: make(map[string]*stagedArtifact, len(arts))}
	for _, a := range arts {
		st.arts[a.Name] = &stagedArtifact{art: a, changed: make(chan struct{})}
	}
	return st, nil
}

// Dir is the staging directory; an artifact is cached there under its
// name.
func (st *Staging) Dir() string { return st.dir }

// Await returns once every named artifact is cached and verified, each
// fetched concurrently unless another child already fetches it. progress,
// when set, is called with how many of them are ready each time that
// changes (never concurrently). The error names each artifact that failed
// ("artifact <name> from <source>: <why>"); when ctx ends first it is
// ctx's cause. A name the Staging was not prepared with is a failure.
func (st *Staging) Await(ctx context.Context, names []string, progress func(ready int)) error {
	names = uniqueSorted(names)
	errs := make([]error, len(names))
	var mu sync.Mutex // orders the progress calls
	ready := 0
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			errs[i] = st.fetch(ctx, n)
			if errs[i] != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ready++
			if progress != nil {
				progress(ready)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var failed artifactFailures
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return failed
}

// artifactFailures are the artifacts an Await could not have, each
// failure naming its artifact; errors.Is and errors.As see each.
type artifactFailures []error

func (f artifactFailures) Error() string {
	parts := make([]string, len(f))
	for i, err := range f {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (f artifactFailures) Unwrap() []error { return f }

// fetch returns once the artifact is ready (nil) or failed (its error),
// fetching it on this goroutine when nobody else does.
func (st *Staging) fetch(ctx context.Context, name string) error {
	for {
		st.mu.Lock()
		a, ok := st.arts[name]
		if !ok {
			st.mu.Unlock()
			return fmt.Errorf("artifact %s: not part of this apply", name)
		}
		switch a.state {
		case stageReady:
			st.mu.Unlock()
			return nil
		case stageFailed:
			st.mu.Unlock()
			return a.err
		case stageFetching:
			ch := a.changed
			st.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		a.state = stageFetching
		st.mu.Unlock()
		return st.download(ctx, a)
	}
}

// download fetches a, which this goroutine has claimed, and records the
// outcome for every child awaiting it. A fetch stopped by ctx (this
// child's cancellation) records nothing: the artifact is free for
// another child to fetch. The catalog closing stops it too.
func (st *Staging) download(parent context.Context, a *stagedArtifact) error {
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	unhook := context.AfterFunc(st.svc.base, func() { stop(ErrClosed) })
	defer unhook()
	_, err := st.svc.dl.Fetch(ctx, st.dir, a.art, st.token)
	var ae *download.ArtifactError
	switch {
	case parent.Err() != nil:
		err = context.Cause(parent)
	case ctx.Err() != nil: // the catalog closed: final, for every child
		err = &Error{Kind: ErrClosed, Msg: fmt.Sprintf("artifact %s: not downloaded: rmsd is shutting down", a.art.Name)}
	case errors.As(err, &ae): // "artifact <name> from <source>: <why>"
	case err != nil:
		err = fmt.Errorf("artifact %s: %w", a.art.Name, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case parent.Err() != nil:
		a.state = stageIdle
	case err != nil:
		a.state, a.err = stageFailed, err
		st.svc.log.Warn().Str("object_id", st.id).Str("artifact", a.art.Name).Err(err).Msg("temporary firmware cache: artifact download failed")
	default:
		a.state = stageReady
		st.svc.log.Info().Str("object_id", st.id).Str("artifact", a.art.Name).Str("path", st.dir).Msg("temporary firmware cache: artifact ready")
	}
	close(a.changed)
	a.changed = make(chan struct{})
	return err
}

// uniqueSorted returns names sorted, each once.
func uniqueSorted(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	k := 0
	for i, n := range out {
		if i == 0 || n != out[k-1] {
			out[k] = n
			k++
		}
	}
	return out[:k]
}

package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/store"
)

// maxReasonFailures is how many failed artifacts an unavailability reason
// spells out before counting the rest.
const maxReasonFailures = 10

// download fetches an object's artifacts into dir, each in a goroutine of
// its own (the Downloader bounds how many transfer at once, and fetches each
// on the calling goroutine), recording
// each artifact's state as it changes, then the object's availability.
// When ctx ends first (Delete, Close) it records nothing more.
//
// The outcome is logged just after it is recorded, never before: a line
// never announces a state the store does not hold (the record can fail),
// and the store, which callers poll, is the source of truth. So a caller
// that sees the object available (or failed) may find its log line
// written a moment later; it is written before the goroutine ends, that is
// before Delete or Close returns.
func (s *Service) download(ctx context.Context, id, dir string, arts []manifest.Artifact, token hw.Secret) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	log := s.log.With().Str("object_id", id).Logger()
	start := time.Now()
	errs := make([]error, len(arts))
	var wg sync.WaitGroup
	for i, a := range arts {
		wg.Go(func() {
			errs[i] = s.fetchArtifact(ctx, id, dir, a, token)
			if errors.Is(errs[i], store.ErrNotFound) {
				stop(errDeleted) // deleted behind the service's back
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		log.Info().Str("cause", context.Cause(ctx).Error()).Msg("firmware object download stopped")
		return
	}
	var failed []string
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) == 0 {
		if err := s.store.SetObjectAvailability(ctx, id, true, ""); err != nil {
			// Left unavailable without a reason: the next start re-verifies it.
			log.Error().Err(err).Msg("firmware object downloaded but not recorded as available")
			return
		}
		s.feed.Publish(Change{Kind: AvailabilityChanged, ObjectID: id, Available: true})
		log.Info().Int("artifacts", len(arts)).Dur("elapsed_ms", time.Since(start)).Msg("firmware object available")
		return
	}
	reason := downloadFailure(failed, len(arts))
	if err := s.store.SetObjectAvailability(ctx, id, false, reason); err != nil {
		log.Error().Err(err).Str("reason", reason).Msg("firmware object download failed, and the failure could not be recorded")
		return
	}
	s.feed.Publish(Change{Kind: AvailabilityChanged, ObjectID: id})
	log.Warn().Str("reason", reason).Int("failed", len(failed)).Int("artifacts", len(arts)).
		Msg("firmware object unavailable: artifact download failed")
}

// fetchArtifact downloads one artifact and records its state: downloading,
// then ready or failed. It returns the artifact's failure, nil when it is
// cached and verified.
func (s *Service) fetchArtifact(ctx context.Context, id, dir string, a manifest.Artifact, token hw.Secret) error {
	downloading := store.ArtifactStatus{State: store.ArtifactDownloading, LocalPath: filepath.Join(dir, a.Name)}
	if err := s.store.SetArtifactStatus(ctx, id, a.Name, downloading); err != nil {
		return fmt.Errorf("artifact %s: record its download: %w", a.Name, err)
	}
	s.feed.Publish(Change{Kind: ArtifactChanged, ObjectID: id, Artifact: a.Name, State: store.ArtifactDownloading})
	res, err := s.dl.Fetch(ctx, dir, a, token)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ae *download.ArtifactError
	st := store.ArtifactStatus{State: store.ArtifactReady, LocalPath: res.Path}
	switch {
	case errors.As(err, &ae): // "artifact <name> from <source>: <why>"
		st = store.ArtifactStatus{State: store.ArtifactFailed, Error: err.Error()}
	case err != nil:
		err = fmt.Errorf("artifact %s: %w", a.Name, err)
		st = store.ArtifactStatus{State: store.ArtifactFailed, Error: err.Error()}
	}
	if serr := s.store.SetArtifactStatus(ctx, id, a.Name, st); serr != nil {
		return errors.Join(err, fmt.Errorf("artifact %s: record its state: %w", a.Name, serr))
	}
	s.feed.Publish(Change{Kind: ArtifactChanged, ObjectID: id, Artifact: a.Name, State: st.State})
	return err
}

// downloadFailure words the reason an object is unavailable after its
// download failed.
func downloadFailure(failed []string, total int) string {
	shown := failed
	if len(shown) > maxReasonFailures {
		shown = shown[:maxReasonFailures]
	}
	msg := fmt.Sprintf("artifact download failed (%d of %d artifacts): %s", len(failed), total, strings.Join(shown, "; "))
	if more := len(failed) - len(shown); more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return msg + "; delete the object and add it again to retry"
}

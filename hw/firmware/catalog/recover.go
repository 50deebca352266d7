package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/store"
)

// interrupted reports whether an object's download was cut short by a
// restart: it is unavailable and no failure was recorded.
func interrupted(obj store.FirmwareObject) bool {
	return !obj.Available && obj.UnavailableReason == ""
}

// downloadedHere reports whether an interrupted object's download was
// this process's to re-verify at start: a single rmsd re-verifies every
// one (no other process shares its store), a cluster member those it
// downloaded itself and those of no member (stored by a single rmsd
// before the cluster was enabled). Another member's download may still
// be under way: that member, started again with the same id, re-verifies
// it once it is interrupted, or another member takes it over once it has
// been quiet for ClaimAfter (takeover.go).
func (s *Service) downloadedHere(obj store.FirmwareObject) bool {
	return s.member == "" || obj.Downloader == "" || obj.Downloader == s.member
}

// reverify checks an interrupted object's cached files, as Open found it:
// every artifact present with its SHA-256 makes the object available;
// otherwise it stays unavailable with a reason telling the caller to add
// it again. Nothing is fetched: the access token was never stored. As in
// download, the outcome is logged just after it is recorded.
func (s *Service) reverify(ctx context.Context, obj store.FirmwareObject) {
	log := s.log.With().Str("object_id", obj.ID).Logger()
	dir, dirErr := s.cacheDir(obj.ID, false)
	var missing []string
	for _, a := range obj.Artifacts {
		var (
			res download.Result
			err = dirErr
		)
		if err == nil {
			res, err = download.Verify(ctx, dir, a.Name, a.SHA256)
		}
		if ctx.Err() != nil {
			log.Info().Str("cause", context.Cause(ctx).Error()).Msg("firmware object re-verification stopped")
			return
		}
		st := store.ArtifactStatus{State: store.ArtifactReady, LocalPath: res.Path}
		if err != nil {
			missing = append(missing, a.Name)
			st = store.ArtifactStatus{State: store.ArtifactFailed,
				Error: fmt.Sprintf("artifact %s: not verified after a restart: %v", a.Name, err)}
		}
		if err := s.store.SetArtifactStatus(ctx, obj.ID, a.Name, st); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				log.Error().Err(err).Str("artifact", a.Name).Msg("could not record a re-verified artifact; the next start checks again")
			}
			return
		}
		s.feed.Publish(Change{Kind: ArtifactChanged, ObjectID: obj.ID, Artifact: a.Name, State: st.State})
	}
	if len(missing) == 0 {
		if err := s.store.SetObjectAvailability(ctx, obj.ID, true, ""); err != nil {
			log.Error().Err(err).Msg("firmware object re-verified but not recorded as available")
			return
		}
		s.feed.Publish(Change{Kind: AvailabilityChanged, ObjectID: obj.ID, Available: true})
		log.Info().Int("artifacts", len(obj.Artifacts)).Msg("firmware object download was interrupted by a restart; its cached artifacts are complete and verified: available")
		return
	}
	reason := restartFailure(missing)
	if err := s.store.SetObjectAvailability(ctx, obj.ID, false, reason); err != nil {
		log.Error().Err(err).Str("reason", reason).Msg("could not record why an interrupted firmware object is unavailable")
		return
	}
	s.feed.Publish(Change{Kind: AvailabilityChanged, ObjectID: obj.ID})
	log.Warn().Str("reason", reason).Msg("firmware object unavailable: its download was interrupted by a restart")
}

// restartFailure words the reason an interrupted object stays unavailable.
func restartFailure(missing []string) string {
	shown := missing
	if len(shown) > maxReasonFailures {
		shown = shown[:maxReasonFailures]
	}
	list := strings.Join(shown, ", ")
	if more := len(missing) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("the artifact download was interrupted by a restart of rmsd before %s was cached and verified; "+
		"the access token is never stored, so delete the object and add it again", list)
}

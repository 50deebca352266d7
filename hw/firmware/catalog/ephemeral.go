package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// ephemeralDir is the directory below firmware_dir that holds the
// temporary caches of ApplyFirmwareObject, one per request, named
// <object id>-<uuid>. Nothing there outlives a restart: Open empties it.
const ephemeralDir = "ephemeral"

// Parse validates a manifest given inline (ApplyFirmwareObject,
// CompareFirmwareObject) as Add does, without storing anything. A refusal
// matches ErrInvalid and manifest.ErrInvalid.
func (s *Service) Parse(configJSON string) (*manifest.Manifest, error) {
	m, err := manifest.Parse([]byte(configJSON), s.mopts)
	if err != nil {
		return nil, invalid(err)
	}
	return m, nil
}

// Stage downloads the named artifacts of m (all of them when names is nil)
// into a fresh temporary cache, <firmware_dir>/ephemeral/<id>-<uuid>, each
// verified, and returns its directory. The caller removes it when the
// update that uses it is over (a batch cleanup plan). On any failure
// nothing is left behind. The token is used for these downloads only.
// Refusals match ErrInvalid (an artifact that cannot be fetched, a bad
// token, a name m does not have); a failed download is an error naming
// each artifact that failed.
func (s *Service) Stage(ctx context.Context, m *manifest.Manifest, names []string, token hw.Secret) (string, error) {
	if s.isClosed() {
		return "", &Error{Kind: ErrClosed, Msg: "rmsd is shutting down"}
	}
	tok := download.AccessToken(token.Reveal())
	if err := checkAccessToken(tok); err != nil {
		return "", err
	}
	arts, err := pick(m, names)
	if err != nil {
		return "", err
	}
	if err := s.dl.Check(arts); err != nil {
		return "", invalid(fmt.Errorf("config_json: an artifact cannot be fetched: %w", err))
	}
	root := filepath.Join(s.dir, ephemeralDir)
	if err := os.MkdirAll(root, 0o750); err != nil {
		return "", fmt.Errorf("catalog: create %s: %w", root, err)
	}
	dir := filepath.Join(root, m.ID+"-"+uuid.NewString())
	if err := os.Mkdir(dir, 0o750); err != nil {
		return "", fmt.Errorf("catalog: create the temporary cache of %s: %w", m.ID, err)
	}
	errs := make([]error, len(arts))
	var wg sync.WaitGroup
	for i, a := range arts {
		wg.Go(func() {
			if _, err := s.dl.Fetch(ctx, dir, a, tok); err != nil {
				errs[i] = fmt.Errorf("artifact %s: %w", a.Name, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			s.log.Warn().Err(rmErr).Str("path", dir).Msg("temporary firmware cache not removed after a failed download")
		}
		return "", fmt.Errorf("download the artifacts of %s: %w", m.ID, err)
	}
	s.log.Info().Str("object_id", m.ID).Str("path", dir).Int("artifacts", len(arts)).Msg("temporary firmware cache ready")
	return dir, nil
}

// pick returns the artifacts of m named in names, or all when names is nil.
func pick(m *manifest.Manifest, names []string) ([]manifest.Artifact, error) {
	all := m.Artifacts()
	if names == nil {
		return all, nil
	}
	byName := make(map[string]manifest.Artifact, len(all))
	for _, a := range all {
		byName[a.Name] = a
	}
	out := make([]manifest.Artifact, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		a, ok := byName[n]
		if !ok {
			return nil, invalidf("config_json names no artifact %q", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// reapEphemeral removes every temporary cache an earlier run left behind
// (a crash or kill during an ApplyFirmwareObject).
func reapEphemeral(firmwareDir string) (int, error) {
	root := filepath.Join(firmwareDir, ephemeralDir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("catalog: read %s: %w", root, err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return n, fmt.Errorf("catalog: remove %s: %w", e.Name(), err)
		}
		n++
	}
	return n, nil
}

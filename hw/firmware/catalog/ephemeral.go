package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// ephemeralDir is the directory below firmware_dir that holds the
// temporary caches of ApplyFirmwareObject, one per request, named
// <object id>-<uuid> (Prepare): directly in it for a single rmsd, in
// ephemeral/<member id>/ for a cluster member, so that members sharing
// firmware_dir keep apart. Nothing there outlives a restart: Open
// removes the caches this member (or single rmsd) left behind, and only
// those.
const ephemeralDir = "ephemeral"

// ephemeralRoot is the directory this process's temporary caches are in.
func (s *Service) ephemeralRoot() string {
	return filepath.Join(s.dir, ephemeralDir, s.member) // s.member "" joins nothing
}

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

// reapEphemeral removes every temporary cache an earlier run left in root
// (a crash or kill during an ApplyFirmwareObject). A member's root is its
// own: everything in it goes but dot files. A single rmsd's root is
// ephemeral/ itself, which also holds the members' directories should the
// firmware_dir have been shared by a cluster: with single it removes only
// the entries named as Prepare names a cache, <object id>-<uuid>.
func reapEphemeral(root string, single bool) (int, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("catalog: read %s: %w", root, err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || (single && !stagingName(e.Name())) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return n, fmt.Errorf("catalog: remove %s: %w", e.Name(), err)
		}
		n++
	}
	return n, nil
}

// stagingName reports whether name is one Prepare gives a temporary
// cache: <object id>-<uuid>.
func stagingName(name string) bool {
	const uuidLen = 36
	i := len(name) - uuidLen - 1
	if i < 1 || name[i] != '-' {
		return false
	}
	_, err := uuid.Parse(name[i+1:])
	return err == nil
}

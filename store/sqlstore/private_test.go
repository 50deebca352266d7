package sqlstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rmsd/rmsd/store"
)

// modes are the permission bits of the database and its -wal and -shm
// files while the store is open.
func modes(t *testing.T, path string) map[string]os.FileMode {
	t.Helper()
	out := map[string]os.FileMode{}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = fi.Mode().Perm()
	}
	return out
}

// A new database and its -wal and -shm files are 0600 even under a
// permissive umask, and an existing world-readable one is narrowed to 0600
// when it is opened.
func TestSQLiteFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o002) // the process's umask: restored below
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "rmsd.db")
	s, err := OpenSQLite(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFirmwareObject(t.Context(), store.FirmwareObject{ID: "A_1", ConfigJSON: "{}"}); err != nil {
		t.Fatal(err)
	}
	for name, mode := range modes(t, path) {
		if mode != 0o600 {
			t.Errorf("new %s has mode %#o, want 0600", name, mode)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for name, mode := range modes(t, path) {
		if mode != 0o600 {
			t.Errorf("reopened %s has mode %#o, want 0600", name, mode)
		}
	}
}

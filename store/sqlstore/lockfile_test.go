package sqlstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestSQLiteOwnerLockFileBesideTheDatabase: an owning SQLite store holds
// <database>.lock, readable by its owner only, recording its host and pid;
// a shared store creates none.
func TestSQLiteOwnerLockFileBesideTheDatabase(t *testing.T) {
	dir := t.TempDir()
	shared, err := OpenSQLite(t.Context(), filepath.Join(dir, "shared.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "shared.db.lock")); !os.IsNotExist(err) {
		t.Errorf("a shared store left a lock file: %v", err)
	}

	path := filepath.Join(dir, "rmsd.db")
	s, err := OpenSQLite(t.Context(), path, Options{Owner: &Ownership{Host: "host-a", PID: 1111}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path + ".lock")
	if err != nil {
		t.Fatalf("no lock file beside the database: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
	b, err := os.ReadFile(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	var rec lockFileRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Host != "host-a" || rec.PID != 1111 || !rec.Since.Equal(s.Owner().Since) {
		t.Errorf("lock file holds %q (%v), want host-a, pid 1111 and since %v", b, err, s.Owner().Since)
	}
}

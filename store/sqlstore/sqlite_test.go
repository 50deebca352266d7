package sqlstore

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/store"
)

func TestSQLiteFileIsInWALModeAndClosesClean(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	s, err := OpenSQLite(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFirmwareObject(t.Context(), store.FirmwareObject{ID: "A_1", ConfigJSON: "{}"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no write-ahead log beside the database while it is open: %v", err)
	}
	if got := s.Info(); got.Engine != "sqlite" || got.Location != "path="+path || got.SchemaVersion < 2 {
		t.Errorf("info = %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The last connection to close checkpoints the log and removes it:
	// both pools were closed.
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write-ahead log left after Close: %v", err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode of the file = %q, %v; want wal", mode, err)
	}
}

func TestSQLiteReadersRefuseWrites(t *testing.T) {
	s, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.read.ExecContext(t.Context(), `DELETE FROM firmware_objects`); err == nil {
		t.Error("a reader connection wrote")
	}
	if got := s.write.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer pool of %d connections, want 1", got)
	}
}

func TestSQLiteMemoryStoresArePrivate(t *testing.T) {
	a, err := OpenSQLite(t.Context(), MemoryPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLite(t.Context(), MemoryPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.CreateFirmwareObject(t.Context(), store.FirmwareObject{ID: "A_1", ConfigJSON: "{}"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetFirmwareObject(t.Context(), "A_1"); err != nil {
		t.Errorf("the in-memory store lost its write: %v", err)
	}
	if _, err := b.GetFirmwareObject(t.Context(), "A_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another in-memory store sees it: %v", err)
	}
	if got := a.Info().Location; got != "path=:memory:" {
		t.Errorf("location %q", got)
	}
}

func TestSQLitePathIsTakenLiterally(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir%20with?odd#chars")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rms?d.db")
	s, err := OpenSQLite(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not created at %s: %v", path, err)
	}
}

func TestSQLiteRefusesAMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	_, err := OpenSQLite(t.Context(), filepath.Join(dir, "rmsd.db"), Options{})
	if err == nil || !strings.Contains(err.Error(), "directory "+dir+" does not exist") {
		t.Errorf("open = %v", err)
	}
	if _, err := OpenSQLite(t.Context(), "", Options{}); err == nil {
		t.Error("an empty path opened")
	}
}

func TestSQLiteRefusesAFileThatIsNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSQLite(t.Context(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("open = %v, want an error naming %s", err, path)
	}
}

// TestSQLiteConcurrentFirstOpensAllSucceed opens one new file from several
// goroutines at once, as processes starting together would, many times
// over: each open switches the file to WAL mode, and SQLite answers the
// loser of that race SQLITE_BUSY at once, without its busy timeout.
func TestSQLiteConcurrentFirstOpensAllSucceed(t *testing.T) {
	const rounds, opens = 20, 6
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "rmsd.db")
		stores := make([]*Store, opens)
		errs := make([]error, opens)
		var wg sync.WaitGroup
		for i := range opens {
			wg.Go(func() { stores[i], errs[i] = OpenSQLite(t.Context(), path, Options{}) })
		}
		wg.Wait()
		for i, s := range stores {
			if errs[i] != nil {
				t.Errorf("round %d: open %d: %v", round, i, errs[i])
				continue
			}
			if err := s.Close(); err != nil {
				t.Errorf("round %d: close %d: %v", round, i, err)
			}
		}
	}
}

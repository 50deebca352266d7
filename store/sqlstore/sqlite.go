package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rmsd/rmsd/store"
)

// MemoryPath opens a private in-memory SQLite database (for tests): it
// lives as long as the store.
const MemoryPath = ":memory:"

// SQLite tuning.
const (
	// sqliteBusyTimeout is how long a connection waits for another
	// process's write lock before failing with SQLITE_BUSY. Within one
	// process writers queue for the single writer connection instead.
	sqliteBusyTimeout = 10 * time.Second
	// sqliteReaders is the size of the read-only pool.
	sqliteReaders = 4
)

// OpenSQLite opens the SQLite database at path, creating the file when it
// is missing (its directory must exist), switches it to WAL mode, applies
// the migrations and returns the store. The file and its -wal and -shm
// files are private to rmsd's user (mode 0600, see makePrivate).
// MemoryPath opens a private in-memory database instead. With o.Owner it
// first locks <path>.lock (see lockfile.go), returning a *store.HeldError
// when another process has it.
func OpenSQLite(ctx context.Context, path string, o Options) (_ *Store, err error) {
	if path == "" {
		return nil, errors.New("sqlstore: open SQLite: empty path")
	}
	if path == MemoryPath {
		// Each connection to :memory: is a database of its own: one
		// connection serves reads and writes.
		db, err := openSQLitePool(ctx, "file::memory:", sqliteParams(false), 1)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open SQLite in memory: %w", err)
		}
		s, err := newStore(ctx, db, db, &sqliteDialect, o, "path="+MemoryPath)
		if err == nil && o.Owner != nil { // private: nobody to lock out
			err = adopt(ctx, s, newOwner(o.Owner), s.clock())
		}
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open SQLite in memory: %w", err)
		}
		return s, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("sqlstore: open SQLite %s: directory %s does not exist", path, filepath.Dir(abs))
	}
	var (
		own   *owner
		since time.Time
	)
	if o.Owner != nil {
		// Before anything touches the database, migrations included.
		own, since = newOwner(o.Owner), nowOf(o)
		own.release, err = untilFree(ctx, o.Owner.Wait, func() (func() error, error) {
			return lockFile(abs+lockFileSuffix, "path="+abs, own, since)
		})
		if err != nil {
			if errors.Is(err, store.ErrHeld) {
				return nil, err
			}
			return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
		}
		defer func() {
			if err != nil && own.release != nil {
				_ = own.close()
			}
		}()
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	name := "file:" + escapeURIPath(abs)
	write, err := openSQLitePool(ctx, name, append(sqliteParams(false), "_txlock=immediate"), 1)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	mode, err := enableWAL(ctx, write)
	if err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		_ = write.Close()
		return nil, fmt.Errorf("sqlstore: open SQLite %s: WAL mode not available (journal mode %q)", path, mode)
	}
	// Migrate before the readers open: they never write, not even the
	// schema.
	s, err := newStore(ctx, write, write, &sqliteDialect, o, "path="+abs)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	if err := makePrivate(abs); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
	}
	read, err := openSQLitePool(ctx, name, sqliteParams(true), sqliteReaders)
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlstore: open SQLite %s for reading: %w", path, err)
	}
	s.read = read
	if own != nil {
		if err = adopt(ctx, s, own, since); err != nil {
			own.release = nil // adopt released it
			return nil, fmt.Errorf("sqlstore: open SQLite %s: %w", path, err)
		}
	}
	return s, nil
}

// sqliteParams are the DSN parameters of every connection: the busy
// timeout, foreign keys enforced, and synchronous=NORMAL (durable in WAL
// mode across a process crash; a power loss may undo the last commits).
// Read-only connections also refuse writes.
func sqliteParams(readOnly bool) []string {
	p := []string{
		"_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
	}
	if readOnly {
		p = append(p, "_pragma=query_only(1)")
	}
	return p
}

// openSQLitePool opens a pool of at most conns connections that are never
// closed while the pool lives (an in-memory database would go with them),
// and checks that one connects.
func openSQLitePool(ctx context.Context, name string, params []string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", name+"?"+strings.Join(params, "&"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// enableWAL switches the database to WAL mode and returns the journal mode
// in force. The mode is kept in the file, so the switch happens once, when
// the file is new; but when several processes create the file at once,
// each tries it, and SQLite answers the loser SQLITE_BUSY at once rather
// than after the busy timeout (to avoid a deadlock, it does not wait while
// upgrading the read lock it holds). So a busy answer is retried here, for
// as long as the busy timeout would have waited.
func enableWAL(ctx context.Context, db *sql.DB) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sqliteBusyTimeout)
	defer cancel()
	retry := time.NewTicker(5 * time.Millisecond)
	defer retry.Stop()
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			return mode, err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("switch to WAL mode: %w", err)
		case <-retry.C:
		}
	}
}

// escapeURIPath escapes what would end or garble the path of a SQLite URI
// file name.
func escapeURIPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

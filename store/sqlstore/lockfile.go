package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/rmsd/rmsd/store"
)

// A SQLite store's owner holds an exclusive flock on a file beside the
// database, <database>.lock (mode 0600), for as long as the store is open;
// the lock goes with the process, however it ends. The file holds the
// holder's host, pid and since, in JSON, for the refusals of the processes
// that find it locked. It is left in place on close: removing it would let
// a process lock a file another is about to open.

// lockFileSuffix names the lock file beside a SQLite database.
const lockFileSuffix = ".lock"

// lockFileRecord is what a lock file holds.
type lockFileRecord struct {
	Host  string    `json:"host"`
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}

// lockFile takes the lock file at path for own, or returns a
// *store.HeldError naming its holder (location names the store). The
// returned function releases it.
func lockFile(path, location string, own *owner, now time.Time) (release func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &store.HeldError{Location: location, Holder: readLockFile(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	release = func() error {
		return errors.Join(syscall.Flock(int(f.Fd()), syscall.LOCK_UN), f.Close())
	}
	rec, _ := json.Marshal(lockFileRecord{Host: own.host, PID: own.pid, Since: now})
	if err := writeLockFile(f, append(rec, '\n')); err != nil {
		_ = release()
		return nil, fmt.Errorf("write lock file %s: %w", path, err)
	}
	return release, nil
}

// writeLockFile replaces f's contents with rec.
func writeLockFile(f *os.File, rec []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(rec, 0); err != nil {
		return err
	}
	return f.Sync()
}

// readLockFile reads the holder a lock file names (zero when it names none
// yet: its holder has only just locked it).
func readLockFile(f *os.File) store.Holder {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return store.Holder{}
	}
	var rec lockFileRecord
	if json.Unmarshal(b, &rec) != nil {
		return store.Holder{}
	}
	return store.Holder{Host: rec.Host, PID: rec.PID, Since: rec.Since.UTC()}
}

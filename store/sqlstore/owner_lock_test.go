package sqlstore

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rmsd/rmsd/store/storetest"
)

// TestPostgresLockCheckSeesTheLock: the check the owner runs every interval
// passes while its session holds the lock and fails once it does not, so
// an owner neither reports a loss that did not happen nor misses one.
func TestPostgresLockCheckSeesTheLock(t *testing.T) {
	cfg, err := pgx.ParseConfig(storetest.TempPostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	l, holder, err := takePGLock(t.Context(), cfg)
	if err != nil || l == nil {
		t.Fatalf("take the lock of a fresh database: %v (holder %+v)", err, holder)
	}
	defer l.close()
	if err := l.held(t.Context()); err != nil {
		t.Fatalf("the session holding the lock is not seen holding it: %v", err)
	}
	other, holder, err := takePGLock(t.Context(), cfg)
	if err != nil || other != nil || holder.Epoch != -1 {
		t.Errorf("a second session took the lock: %v, %v, holder %+v", other, err, holder)
	}
	if _, err := l.conn.ExecContext(t.Context(), `SELECT pg_advisory_unlock($1)`, lockOwner); err != nil {
		t.Fatal(err)
	}
	if err := l.held(t.Context()); err == nil {
		t.Error("the check passes on a session that released the lock")
	}
}

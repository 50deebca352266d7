package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL server the tests use, and whether they may skip without
// one.
const (
	// EnvPostgresURL names a database on the test server that the tests
	// connect to in order to create and drop their own databases; the user
	// needs CREATEDB. Unset: DefaultPostgresURL.
	EnvPostgresURL = "RMSD_TEST_POSTGRES_URL"
	// DefaultPostgresURL is the local server as CI and the development
	// machines run it (trust authentication).
	DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	// EnvRequirePostgres set to 1 turns "no server can be reached" from a
	// skip into a failure. .ci/run sets it.
	EnvRequirePostgres = "RMSD_TEST_REQUIRE_POSTGRES"
)

// tempDatabasePrefix starts the name of every database the tests create:
// rmsd_test_<unix seconds>_<random>.
const tempDatabasePrefix = "rmsd_test_"

// staleAfter is how old a test database left behind by a killed run must
// be before a later run drops it.
const staleAfter = 6 * time.Hour

var (
	staleSweep sync.Once
	// noServer, once set, is why no server could be reached: later tests
	// skip at once instead of waiting for the same failure.
	noServer struct {
		sync.Mutex
		msg string
	}
)

// TempPostgresDatabase creates a new, empty database with a unique name on
// the test server and returns its URL; the database is dropped when t
// ends. When no server can be reached the test is skipped, loudly (on
// stderr too), unless RMSD_TEST_REQUIRE_POSTGRES=1 makes that a failure.
// Any other problem (authentication, permissions) fails the test.
func TempPostgresDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvPostgresURL)
	if admin == "" {
		admin = DefaultPostgresURL
	}
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL", EnvPostgresURL)
	}
	noServer.Lock()
	msg := noServer.msg
	noServer.Unlock()
	if msg != "" {
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		if unreachable(err) && os.Getenv(EnvRequirePostgres) != "1" {
			msg := fmt.Sprintf("SKIPPING PostgreSQL tests: no server at %s (%v). Start it (.ci/start-postgres.sh, see README, Storage) or point %s at one; %s=1 makes this a failure.",
				u.Host, err, EnvPostgresURL, EnvRequirePostgres)
			noServer.Lock()
			if noServer.msg == "" {
				fmt.Fprintln(os.Stderr, "storetest: "+msg)
				noServer.msg = msg
			}
			noServer.Unlock()
			t.Skip(msg)
		}
		t.Fatalf("connect to the PostgreSQL test server at %s: %v", u.Host, err)
	}
	defer conn.Close(context.Background())
	staleSweep.Do(func() { dropStale(ctx, t, conn) })

	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := fmt.Sprintf("%s%d_%s", tempDatabasePrefix, time.Now().Unix(), hex.EncodeToString(suffix))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err == nil {
			defer conn.Close(context.Background())
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	db := *u
	db.Path = "/" + name
	return db.String()
}

// unreachable reports whether a connection failed for want of a server
// (refused, unroutable, timed out) rather than, say, a rejected password.
func unreachable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// dropStale drops test databases that killed runs left behind, once they
// are old enough not to belong to a run still going.
func dropStale(ctx context.Context, t testing.TB, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE 'rmsd\\_test\\_%'")
	if err != nil {
		t.Logf("list stale test databases: %v", err)
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Logf("list stale test databases: %v", err)
		return
	}
	for _, name := range names {
		stamp, _, _ := strings.Cut(strings.TrimPrefix(name, tempDatabasePrefix), "_")
		created, err := strconv.ParseInt(stamp, 10, 64)
		if err != nil || time.Since(time.Unix(created, 0)) < staleAfter {
			continue
		}
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("drop stale test database %s: %v", name, err)
		}
	}
}

package main

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

func TestRunOpensTheSQLiteStoreAndClosesItAtShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "rmsd.db")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_STORAGE__SQLITE_PATH=" + path}, "--config", writeFile(t, insecureLoopback))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the daemon serves without its database file: %v", err)
	}
	opened := logLine(t, d.stdout.String(), "store opened")
	if opened["engine"] != "sqlite" || opened["location"] != "path="+path || opened["setting"] != "[storage] sqlite_path" ||
		opened["schema_version"] == nil || opened["component"] != "store" {
		t.Errorf("store opened line: %v", opened)
	}
	stopRun(t, d)
	logLine(t, d.stdout.String(), "store closed")
	// SQLite removes the write-ahead log when its last connection closes.
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write-ahead log left after shutdown (the store was not closed): %v", err)
	}
}

func TestRunKeepsTheStoreAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	environ := []string{"RMS_ALLOW_INSECURE=1", "RMS_STORAGE__SQLITE_PATH=" + path}
	stopRun(t, startRun(t, environ, "--config", writeFile(t, insecureLoopback)))

	s, err := sqlstore.OpenSQLite(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFirmwareObject(t.Context(), store.FirmwareObject{ID: "DGXGB200_1.3.6", HardwareType: "GB200", ConfigJSON: `{}`}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	stopRun(t, startRun(t, environ, "--config", writeFile(t, insecureLoopback)))
	s, err = sqlstore.OpenSQLite(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetFirmwareObject(t.Context(), "DGXGB200_1.3.6"); err != nil {
		t.Errorf("the catalog lost its object across a restart: %v", err)
	}
}

func TestRunUsesPostgreSQLWhenDatabaseURLIsSet(t *testing.T) {
	u, err := url.Parse(storetest.TempPostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test server trusts; the password goes unused
	sqlitePath := filepath.Join(t.TempDir(), "rmsd.db")
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1", "DATABASE_URL=" + u.String(), "RMS_STORAGE__SQLITE_PATH=" + sqlitePath},
		"--config", writeFile(t, insecureLoopback+"[postgres]\ndb_pool_max = 2\n"))
	stopRun(t, d)

	opened := logLine(t, d.stdout.String(), "store opened")
	want := "host=" + u.Host + " database=" + strings.TrimPrefix(u.Path, "/")
	if opened["engine"] != "postgres" || opened["location"] != want || opened["setting"] != "DATABASE_URL" {
		t.Errorf("store opened line: %v; want engine postgres, location %q, setting DATABASE_URL", opened, want)
	}
	if out := d.stdout.String() + d.stderr.String(); strings.Contains(out, "hunter2") {
		t.Errorf("the database password is in the output:\n%s", out)
	}
	if _, err := os.Stat(sqlitePath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a PostgreSQL daemon created the SQLite file too: %v", err)
	}
}

// newerSchema is a SQLite file whose schema is newer than this rmsd's.
func newerSchema(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rmsd.db")
	s, err := sqlstore.OpenSQLite(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'x', 0)`); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunExitsOneWhenTheStoreCannotOpen(t *testing.T) {
	const secret = "hunter2"
	tests := []struct {
		name    string
		config  string
		environ func(t *testing.T) []string
		want    []string
	}{
		{
			name: "unreachable PostgreSQL from DATABASE_URL",
			environ: func(*testing.T) []string {
				return []string{"DATABASE_URL=postgres://rms:" + secret + "@127.0.0.1:1/rms?sslmode=disable"}
			},
			want: []string{"open the store named by DATABASE_URL", "connect to PostgreSQL at host=127.0.0.1:1 database=rms", "connect"},
		},
		{
			name:   "malformed [postgres] db_url",
			config: "[postgres]\ndb_url = \"postgres://rms:" + secret + "@[::1/rms\"\n",
			want:   []string{"open the store named by [postgres] db_url", "cannot be parsed"},
		},
		{
			name: "missing SQLite directory",
			environ: func(t *testing.T) []string {
				return []string{"RMS_STORAGE__SQLITE_PATH=" + filepath.Join(t.TempDir(), "absent", "rmsd.db")}
			},
			want: []string{"open the store named by [storage] sqlite_path", "absent does not exist"},
		},
		{
			name:    "schema newer than this rmsd",
			environ: func(t *testing.T) []string { return []string{"RMS_STORAGE__SQLITE_PATH=" + newerSchema(t)} },
			want:    []string{"schema version 99, newer than this rmsd knows"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var environ []string
			if tt.environ != nil {
				environ = tt.environ(t)
			}
			sqlitePath := filepath.Join(t.TempDir(), "untouched.db")
			environ = append(environ, "RMS_ALLOW_INSECURE=1")
			if !strings.Contains(strings.Join(environ, " "), "RMS_STORAGE__SQLITE_PATH=") {
				environ = append(environ, "RMS_STORAGE__SQLITE_PATH="+sqlitePath)
			}
			var stdout, stderr lockedBuffer
			code := run(context.Background(), runOptions{
				Args:    []string{"--config", writeFile(t, insecureLoopback+tt.config)},
				Environ: environ,
				Stdout:  &stdout, Stderr: &stderr,
				Ready: func(net.Addr) { t.Error("the daemon served without its store") },
			})
			msg := stderr.String()
			if code != 1 || strings.Count(msg, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want 1 and one line", code, msg)
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg+stdout.String(), secret) {
				t.Errorf("the database password is in the output:\n%s%s", msg, stdout.String())
			}
			if _, err := os.Stat(sqlitePath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the daemon fell back to SQLite: %v", err)
			}
		})
	}
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/rmsd/rmsd/store/storetest"
)

func TestLoadMigrations(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []int  // versions loaded
		err   string // or the error expected
	}{
		{"in order", map[string]string{"0002_b.sql": "B", "0001_a.sql": "A", "README.md": "x"}, []int{1, 2}, ""},
		{"gap", map[string]string{"0001_a.sql": "A", "0003_c.sql": "C"}, nil, "0003_c.sql where version 2 was expected"},
		{"duplicate", map[string]string{"0001_a.sql": "A", "0001_b.sql": "B"}, nil, "where version 2 was expected"},
		{"no number", map[string]string{"first.sql": "A"}, nil, "name is not NNNN_name.sql"},
		{"zero", map[string]string{"0000_a.sql": "A"}, nil, "name is not NNNN_name.sql"},
		{"none", map[string]string{"README.md": "x"}, nil, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, body := range tt.files {
				fsys["m/"+name] = &fstest.MapFile{Data: []byte(body)}
			}
			ms, err := loadMigrations(fsys, "m")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.version)
				if len(m.checksum) != 64 {
					t.Errorf("%s: checksum %q", m.name, m.checksum)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("versions %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEmbeddedMigrationSetsMatch keeps the engines' sets in step: the same
// versions with the same names, so that a version means one schema.
func TestEmbeddedMigrationSetsMatch(t *testing.T) {
	names := map[string][]string{}
	for _, engine := range []string{sqliteDialect.engine, postgresDialect.engine} {
		ms, err := loadMigrations(migrationFiles, "migrations/"+engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			names[engine] = append(names[engine], m.name)
		}
	}
	if !reflect.DeepEqual(names["sqlite"], names["postgres"]) {
		t.Errorf("sqlite migrations %v, postgres %v", names["sqlite"], names["postgres"])
	}
}

// engineDB is an empty database of one engine, as migrate sees it.
type engineDB struct {
	db *sql.DB
	d  *dialect
}

// forEachEngine runs test as a subtest per engine, each on an empty
// database: a SQLite file, and a PostgreSQL database (skipped loudly
// without a server).
func forEachEngine(t *testing.T, test func(t *testing.T, e engineDB)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := openSQLitePool(t.Context(), "file:"+escapeURIPath(filepath.Join(t.TempDir(), "m.db")), sqliteParams(false), 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		test(t, engineDB{db, &sqliteDialect})
	})
	t.Run("postgres", func(t *testing.T) {
		cfg, err := pgx.ParseConfig(storetest.TempPostgresDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		db := stdlib.OpenDB(*cfg)
		t.Cleanup(func() { _ = db.Close() })
		test(t, engineDB{db, &postgresDialect})
	})
}

func migrationSet(t *testing.T, files map[string]string) []migration {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys["m/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	ms, err := loadMigrations(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func tableExists(t *testing.T, db *sql.DB, table string) bool {
	t.Helper()
	_, err := db.ExecContext(t.Context(), "SELECT 1 FROM "+table+" WHERE 1 = 0")
	return err == nil
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineDB) {
		ms, err := loadMigrations(migrationFiles, "migrations/"+e.d.engine)
		if err != nil {
			t.Fatal(err)
		}
		version, applied, err := migrate(t.Context(), e.db, e.d, ms, now)
		if err != nil || version != len(ms) || applied != len(ms) {
			t.Fatalf("first migrate = version %d, applied %d, %v; want %d, %d", version, applied, err, len(ms), len(ms))
		}
		version, applied, err = migrate(t.Context(), e.db, e.d, ms, now.Add(time.Hour))
		if err != nil || version != len(ms) || applied != 0 {
			t.Fatalf("second migrate = version %d, applied %d, %v; want %d, 0", version, applied, err, len(ms))
		}
		var rows int
		if err := e.db.QueryRowContext(t.Context(), "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil || rows != len(ms) {
			t.Errorf("schema_migrations holds %d rows (%v), want %d", rows, err, len(ms))
		}
	})
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineDB) {
		ms := migrationSet(t, map[string]string{
			"0001_good.sql":   "CREATE TABLE good (id INTEGER PRIMARY KEY);",
			"0002_broken.sql": "CREATE TABLE half (id INTEGER PRIMARY KEY); CREATE TABLE oops (;",
		})
		_, _, err := migrate(t.Context(), e.db, e.d, ms, now)
		if err == nil || !strings.Contains(err.Error(), "apply 0002_broken.sql") {
			t.Fatalf("migrate = %v, want a failure naming 0002_broken.sql", err)
		}
		for _, table := range []string{"good", "half", "schema_migrations"} {
			if tableExists(t, e.db, table) {
				t.Errorf("table %s exists after a failed migration", table)
			}
		}
	})
}

func TestMigrateRefusesASchemaItDoesNotKnow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e engineDB) {
		two := migrationSet(t, map[string]string{
			"0001_a.sql": "CREATE TABLE a (id INTEGER PRIMARY KEY);",
			"0002_b.sql": "CREATE TABLE b (id INTEGER PRIMARY KEY);",
		})
		if _, _, err := migrate(t.Context(), e.db, e.d, two, now); err != nil {
			t.Fatal(err)
		}
		_, _, err := migrate(t.Context(), e.db, e.d, two[:1], now)
		if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "schema version 2, newer than this rmsd knows (1)") {
			t.Errorf("older binary: %v", err)
		}
		edited := migrationSet(t, map[string]string{
			"0001_a.sql": "CREATE TABLE a (id INTEGER PRIMARY KEY); -- edited",
			"0002_b.sql": "CREATE TABLE b (id INTEGER PRIMARY KEY);",
			"0003_c.sql": "CREATE TABLE c (id INTEGER PRIMARY KEY);",
		})
		_, _, err = migrate(t.Context(), e.db, e.d, edited, now)
		if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "migration 0001_a.sql differs") {
			t.Errorf("edited migration: %v", err)
		}
		if tableExists(t, e.db, "c") {
			t.Error("a refused migration run applied 0003_c.sql")
		}
	})
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	s, err := OpenSQLite(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(t.Context(), `INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'x', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = OpenSQLite(context.Background(), path, Options{})
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), path) {
		t.Errorf("open = %v, want ErrSchemaMismatch naming %s", err, path)
	}
}

package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationFiles holds one migration set per engine.
//
//go:embed migrations
var migrationFiles embed.FS

// ErrSchemaMismatch: the database's schema is not one this binary can use
// (newer than it, or built by migrations whose text has since changed).
// Nothing was changed.
var ErrSchemaMismatch = errors.New("sqlstore: database schema does not match this rmsd")

// migration is one versioned schema change.
type migration struct {
	version  int
	name     string // file name, e.g. "0001_firmware_catalog.sql"
	sql      string
	checksum string // sha256 of the file, hex
}

// loadMigrations reads the set in dir: files NNNN_name.sql numbered 1, 2,
// 3... without gaps.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read migrations %s: %w", dir, err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		prefix, _, ok := strings.Cut(e.Name(), "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version < 1 {
			return nil, fmt.Errorf("sqlstore: migration %s/%s: name is not NNNN_name.sql", dir, e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("sqlstore: read migration %s/%s: %w", dir, e.Name(), err)
		}
		sum := sha256.Sum256(body)
		ms = append(ms, migration{version: version, name: e.Name(), sql: string(body), checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlstore: migrations %s: %s where version %d was expected (no gaps, no duplicates)", dir, m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("sqlstore: migrations %s: none", dir)
	}
	return ms, nil
}

// migrate brings db's schema up to the newest of ms in one transaction,
// serialised against other processes doing the same, and returns the
// schema version and how many migrations it applied. Migrations already
// recorded are checked, not run again.
func migrate(ctx context.Context, db *sql.DB, d *dialect, ms []migration, now time.Time) (version, applied int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlstore: migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if d.serialise != "" {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(d.serialise, lockMigrations)); err != nil {
			return 0, 0, fmt.Errorf("sqlstore: migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.migrationsTable); err != nil {
		return 0, 0, fmt.Errorf("sqlstore: migrate: create schema_migrations: %w", err)
	}
	done, err := appliedMigrations(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	if newest := maxKey(done); newest > len(ms) {
		return 0, 0, fmt.Errorf("sqlstore: migrate: the database has schema version %d, newer than this rmsd knows (%d): %w", newest, len(ms), ErrSchemaMismatch)
	}
	for _, m := range ms {
		if sum, ok := done[m.version]; ok && sum != m.checksum {
			return 0, 0, fmt.Errorf("sqlstore: migrate: migration %s differs from the one applied to this database (checksum %.12s, applied %.12s): %w", m.name, m.checksum, sum, ErrSchemaMismatch)
		}
	}
	for _, m := range ms {
		if _, ok := done[m.version]; ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return 0, 0, fmt.Errorf("sqlstore: migrate: apply %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, d.sql(`INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`),
			m.version, m.name, m.checksum, d.timeArg(now)); err != nil {
			return 0, 0, fmt.Errorf("sqlstore: migrate: record %s: %w", m.name, err)
		}
		applied++
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("sqlstore: migrate: commit: %w", err)
	}
	return len(ms), applied, nil
}

// appliedMigrations reads schema_migrations: version → checksum.
func appliedMigrations(ctx context.Context, tx *sql.Tx) (map[int]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version, checksum FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: migrate: read schema_migrations: %w", err)
	}
	defer rows.Close()
	done := map[int]string{}
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("sqlstore: migrate: read schema_migrations: %w", err)
		}
		done[v] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: migrate: read schema_migrations: %w", err)
	}
	return done, nil
}

func maxKey(m map[int]string) int {
	n := 0
	for k := range m {
		n = max(n, k)
	}
	return n
}

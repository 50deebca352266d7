package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// storeOpenTimeout bounds connecting to the database and migrating it at
// start, so that an unreachable server fails the start rather than
// hanging it.
const storeOpenTimeout = time.Minute

// storeLockWait is how long a start waits for a store another rmsd holds
// before refusing: enough for PostgreSQL to end the session of a daemon
// that was just killed, and so release its lock.
const storeLockWait = 5 * time.Second

// openStore opens the store the configuration names: PostgreSQL when
// [postgres] db_url or DATABASE_URL is set, else the SQLite file [storage]
// sqlite_path. A failure fails the start: there is no falling back from
// one to the other. It logs the engine and location, never the URL.
func openStore(ctx context.Context, cfg *config.Config, environ []string, log zerolog.Logger) (store.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	var (
		s       *sqlstore.Store
		err     error
		setting = "[storage] sqlite_path"
	)
	// The daemon owns its store for its whole life: a second one on the
	// same database is refused, naming this one (see owner.go). One
	// setting bounds its reads and its writes but the job journal's (the
	// job engine bounds those with the same setting).
	opts := sqlstore.Options{
		Owner:        &sqlstore.Ownership{Wait: storeLockWait, OnChange: ownershipLogger(log)},
		ReadTimeout:  time.Duration(cfg.Storage.TimeoutSeconds) * time.Second,
		WriteTimeout: time.Duration(cfg.Storage.TimeoutSeconds) * time.Second,
	}
	if cfg.Cluster.Enabled {
		// Every member writes to the store: none holds it alone. Racks are
		// fenced one by one instead (store.RackOwners).
		opts.Owner = nil
	}
	if dbURL := cfg.Postgres.DBURL; dbURL != "" {
		setting = databaseURLSetting(environ)
		s, err = sqlstore.OpenPostgres(ctx, dbURL, cfg.Postgres.DBPoolMax, opts)
	} else {
		s, err = sqlstore.OpenSQLite(ctx, cfg.Storage.SQLitePath, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("open the store named by %s: %w", setting, err)
	}
	info, own := s.Info(), s.Owner()
	log.Info().Str("engine", info.Engine).Str("location", info.Location).
		Int("schema_version", info.SchemaVersion).Str("setting", setting).Int64("epoch", own.Epoch).Bool("shared", cfg.Cluster.Enabled).Msg("store opened")
	return s, nil
}

// databaseURLSetting names where the database URL came from: a non-empty
// DATABASE_URL overrides [postgres] db_url (config ignores an empty one).
func databaseURLSetting(environ []string) string {
	for _, kv := range environ {
		if name, value, _ := strings.Cut(kv, "="); name == config.EnvDatabaseURL && value != "" {
			return config.EnvDatabaseURL
		}
	}
	return "[postgres] db_url"
}

// closeStore closes the store, if one was opened. A failure is returned
// for the caller to report.
func (d *daemon) closeStore() error {
	if d.store == nil {
		return nil
	}
	if err := d.store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	d.log.Info().Msg("store closed")
	return nil
}

package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/rmsd/rmsd/store"
)

// OpenPostgres connects to the PostgreSQL database dbURL names (a
// postgres:// URL or a key=value string) with a pool of at most poolMax
// connections, applies the migrations and returns the store. Its errors
// and Info name the server and database, never the user's password. With
// o.Owner it first takes the owner lock (see owner_postgres.go),
// returning a *store.HeldError when another process has it.
func OpenPostgres(ctx context.Context, dbURL string, poolMax int, o Options) (*Store, error) {
	if poolMax <= 0 {
		return nil, fmt.Errorf("sqlstore: open PostgreSQL: pool size %d is not positive", poolMax)
	}
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		// pgx's message quotes the URL, and its password with it.
		return nil, errors.New("sqlstore: open PostgreSQL: the database URL cannot be parsed " +
			"(it is not repeated here since it may hold a password); expected postgres://user:password@host:port/database")
	}
	location := postgresLocation(cfg)
	var lock *pgLock
	if o.Owner != nil {
		// Before anything touches the database, migrations included.
		lock, err = untilFree(ctx, o.Owner.Wait, func() (*pgLock, error) { return lockPostgres(ctx, cfg, location) })
		if err != nil {
			if errors.Is(err, store.ErrHeld) {
				return nil, err
			}
			return nil, redact(fmt.Errorf("sqlstore: connect to PostgreSQL at %s: %w", location, err), cfg.Password)
		}
	}
	s, err := openPostgresPool(ctx, cfg, poolMax, o, location)
	if err != nil {
		if lock != nil {
			lock.close()
		}
		return nil, err
	}
	if lock != nil {
		own := newOwner(o.Owner)
		if err := adopt(ctx, s, own, s.clock()); err != nil {
			lock.close()
			return nil, redact(fmt.Errorf("sqlstore: PostgreSQL at %s: %w", location, err), cfg.Password)
		}
		own.watch(s, lock, cfg, o.Owner.CheckInterval)
	}
	return s, nil
}

// openPostgresPool opens the store's pool and migrates the schema.
func openPostgresPool(ctx context.Context, cfg *pgx.ConnConfig, poolMax int, o Options, location string) (*Store, error) {
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(poolMax)
	db.SetMaxIdleConns(poolMax)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, redact(fmt.Errorf("sqlstore: connect to PostgreSQL at %s: %w", location, err), cfg.Password)
	}
	s, err := newStore(ctx, db, db, &postgresDialect, o, location)
	if err != nil {
		return nil, redact(fmt.Errorf("sqlstore: PostgreSQL at %s: %w", location, err), cfg.Password)
	}
	return s, nil
}

// postgresLocation names a server and database for logs and errors.
func postgresLocation(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if !strings.HasPrefix(host, "/") { // not a Unix socket directory
		host = net.JoinHostPort(host, strconv.Itoa(int(cfg.Port)))
	}
	return fmt.Sprintf("host=%s database=%s", host, cfg.Database)
}

// redact keeps secret out of err's text. The drivers' messages do not
// quote passwords; this holds even if one ever did.
func redact(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, secret: secret}
}

type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "[REDACTED]")
}

func (e *redactedError) Unwrap() error { return e.err }

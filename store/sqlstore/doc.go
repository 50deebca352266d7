// Package sqlstore implements store.Store on SQL databases through
// database/sql: SQLite (modernc.org/sqlite, pure Go, embedded; rmsd's
// default) and PostgreSQL (github.com/jackc/pgx/v5). The queries are
// shared; what differs between the engines (placeholders, time columns,
// row locks, the DDL) is in dialect.go and in one migration set per engine
// under migrations/.
//
// Schema: migrations are versioned SQL files (migrations/<engine>/NNNN_name.sql),
// embedded in the binary and applied by Open in a single transaction,
// serialised against other processes opening the same database, and
// recorded with their checksums in schema_migrations. A released migration
// is never edited: a database whose recorded checksum differs, or whose
// schema is newer than the binary, is refused, never "repaired".
//
// SQLite runs in WAL mode with a busy timeout, one writer connection
// (writers queue in the process, in order) and a pool of readers, so reads
// never wait for writes. PostgreSQL uses a pool of up to [postgres]
// db_pool_max connections in READ COMMITTED; every write that could race
// locks the firmware object's row first, so concurrent calls serialise on
// the object and never deadlock.
//
// Ownership (owner.go, lockfile.go, owner_postgres.go): opened with
// Options.Owner, a store is its process's own until Close. The lock comes
// first, before the migrations (SQLite: an flock on <database>.lock;
// PostgreSQL: a session-level advisory lock on a connection of its own,
// watched by a goroutine), then a new epoch in the store_owner row; every
// write transaction checks that row's epoch before anything else, so a
// process that lost its lock cannot commit behind the one that took the
// store (store.ErrNotOwner). A held store is refused with a
// *store.HeldError naming the holder. Opened without an owner (tools,
// tests), a store takes no lock and checks nothing.
//
// The package does not choose an engine (cmd/rmsd does, from the
// configuration) and never logs: errors carry the context, and secrets in
// a database URL never appear in them.
package sqlstore

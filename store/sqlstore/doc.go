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
// The package does not choose an engine (cmd/rmsd does, from the
// configuration) and never logs: errors carry the context, and secrets in
// a database URL never appear in them.
package sqlstore

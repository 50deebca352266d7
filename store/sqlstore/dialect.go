package sqlstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dialect is what differs between the engines for the shared queries.
type dialect struct {
	// engine is store.Info.Engine: "sqlite" or "postgres".
	engine string
	// dollarPlaceholders: the engine wants $1, $2... where the queries
	// say ?.
	dollarPlaceholders bool
	// lockRow follows a SELECT of one firmware object to lock its row
	// until the transaction ends ("" where transactions are serialised).
	lockRow string
	// shareRow follows the SELECT of the owner record in a write
	// transaction to keep the row from changing until the transaction
	// ends ("" where transactions are serialised).
	shareRow string
	// serialise, when set, is run first in a transaction to serialise it
	// with others running the same statement (migrations, journal
	// appends); %d is the lock's key. SQLite serialises every write.
	serialise string
	// serialisePair is serialise with a lock of two 32-bit keys (%d, %d),
	// a space apart from serialise's 64-bit keys: the journal streams'.
	serialisePair string
	// timesAsMicros: time columns are INTEGER microseconds since the Unix
	// epoch rather than a native timestamp.
	timesAsMicros bool
	// migrationsTable is the DDL of the migration runner's own table.
	migrationsTable string
}

var sqliteDialect = dialect{
	engine:        "sqlite",
	timesAsMicros: true,
	migrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		checksum   TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`,
}

var postgresDialect = dialect{
	engine:             "postgres",
	dollarPlaceholders: true,
	lockRow:            " FOR UPDATE",
	shareRow:           " FOR SHARE",
	serialise:          "SELECT pg_advisory_xact_lock(%d)",
	serialisePair:      "SELECT pg_advisory_xact_lock(%d, %d)",
	migrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER     PRIMARY KEY,
		name       TEXT        NOT NULL,
		checksum   TEXT        NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL
	)`,
}

// Advisory lock keys of the statements serialised with dialect.serialise.
const (
	lockMigrations int64 = 0x726d7364_0001 // "rmsd", 1
	lockJournal    int64 = 0x726d7364_0002
	// lockOwner is held by the owning process's session for its lifetime
	// (pg_try_advisory_lock), not per transaction.
	lockOwner int64 = 0x726d7364_0003
	// lockStreamClass is the first key of every journal stream's lock
	// (serialisePair), the second a hash of the stream's name.
	lockStreamClass int32 = 0x726d7364 // "rmsd"
)

// sql returns query in the engine's placeholder style. Queries are
// written with ? placeholders and never contain a literal ?.
func (d *dialect) sql(query string) string {
	if !d.dollarPlaceholders {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// placeholders returns n comma-separated ? placeholders, for IN lists.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// timeArg is t as a query argument of a time column.
func (d *dialect) timeArg(t time.Time) any {
	if d.timesAsMicros {
		return t.UnixMicro()
	}
	return t
}

// timeCol scans a time column of either engine into a UTC time.
type timeCol struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c timeCol) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*c.t = time.UnixMicro(v).UTC()
	case time.Time:
		*c.t = v.UTC()
	default:
		return fmt.Errorf("sqlstore: time column holds %T, want microseconds or a timestamp", src)
	}
	return nil
}

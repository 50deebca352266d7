package store

import "context"

// Store is rmsd's durable state. Each method of Catalog and Journal called
// on the Store runs in a transaction of its own; Update runs several in
// one. A Store is safe for concurrent use.
type Store interface {
	Catalog
	Journal
	Nodes
	// Update runs fn in one read-write transaction and commits it when fn
	// returns nil. When fn returns an error (or panics, or ctx ends first)
	// nothing fn did is kept, and fn's error is returned as it is. fn must
	// use only tx, never the Store, and must not keep tx after it returns.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Info describes the store for logs: engine, location, schema version.
	Info() Info
	// Close waits for running calls and releases the database.
	Close() error
}

// Tx is one transaction of a Store: the same operations, all committed
// together or not at all.
type Tx interface {
	Catalog
	Journal
	Nodes
}

// Info describes an open store. Location never holds a secret.
type Info struct {
	// Engine is "sqlite" or "postgres".
	Engine string
	// Location is the SQLite file ("path=rmsd.db") or the PostgreSQL server
	// and database ("host=db:5432 database=rms"), without user or password.
	Location string
	// SchemaVersion is the newest migration applied.
	SchemaVersion int
}

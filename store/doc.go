// Package store is rmsd's durable state: the firmware catalog (firmware
// objects from firmware manifests, their cached artifacts, one default per
// hardware type), the history of stored objects applied to racks, an
// append-only event journal for the job engine (compacted by replacing it
// with a snapshot), and the registered nodes, whose settings arrive sealed
// (keyring seals them; the store never sees a credential). It declares the interface
// and the value types only; the engines live in sub-packages (sqlstore:
// SQLite embedded by default, PostgreSQL when a database URL is set), and
// storetest holds the contract suite every engine must pass.
//
// Why a top-level package: the catalog belongs to the firmware RPCs and the
// journal to the job engine, so the store sits under neither grpc/ nor
// actors/ nor hw/. Like messages, it imports only the standard library, so
// every layer may depend on it (in practice through a narrower interface of
// its own) while only cmd/rmsd picks and opens an engine. It does no
// business logic: it does not parse manifests, download artifacts, decide
// when an object is available or compute whether a history record's object
// still exists. It records what its callers decide, atomically.
//
// Every method takes a context first and runs in one transaction. Update
// runs several calls in one transaction, so a later job journal can append
// its events in the same commit as the catalog or history change they
// describe. Errors wrap ErrNotFound, ErrExists or ErrInvalid where callers
// need to tell them apart (errors.Is); anything else is a storage failure.
//
// One writer per store (owner.go): a daemon opens its store as its owner,
// so that a second one is refused (ErrHeld, a *HeldError naming the
// Holder) and a writer that lost the store has its late writes refused
// (ErrNotOwner).
package store

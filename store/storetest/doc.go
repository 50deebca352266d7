// Package storetest is the contract every store.Store engine must meet,
// as one test suite (Run) that each engine's tests call with a Backend,
// and a PostgreSQL test database helper (TempPostgresDatabase).
//
// The suite checks behaviour only through the store.Store interface: round
// trips, filters and ordering, one default per hardware type under
// concurrent SetDefaultFirmwareObject calls, deletion keeping the history,
// all-or-nothing transactions, the journal's ordering under concurrent
// appends, the racks' journal streams of cluster mode (isolated, fenced,
// compacted one at a time, indexing jobs by rack; refused by an engine a
// cluster cannot share), reopening, migrations applied twice, and concurrent writers in
// one and in two stores on the same storage. It never sleeps to
// synchronise, and every check can fail. It is imported by tests only.
package storetest

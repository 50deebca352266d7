// Package config loads and validates rmsd's configuration.
//
// Configuration comes from one TOML file (upstream RMS's key set, with the
// same names and defaults, plus rmsd's own sections) and from environment
// variables that override the file: RMS_<SECTION>__<KEY> for a key in a
// section and RMS__<KEY> for a top-level key (note the double underscores).
// Any other RMS_* variable is ignored, because Kubernetes service links
// (RMS_PORT=tcp://..., RMS_SERVICE_HOST) and other tools (RMS_API_URL) use
// the same prefix. DATABASE_URL overrides [postgres] db_url, as upstream,
// unless it is empty; a URL selects the PostgreSQL store, and without one
// [storage] sqlite_path names the embedded SQLite store.
// RMS_ALLOW_INSECURE is not a configuration key: it is the second switch of
// the plaintext gate (see Transport).
//
// Loading reports every problem at once: unknown keys by their dotted path
// (or the variable that set them), wrong types with the key and the expected
// type, and invalid values; a TOML syntax error by its line and column. The
// package holds no global state; callers pass sub-structs to whoever needs
// them. It does not act on the configuration (no logging, no listening).
package config

//go:generate go run ./internal/configdoc -src . -o ../docs/config-reference.md

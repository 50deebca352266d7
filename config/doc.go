// Package config loads and validates rmsd's configuration.
//
// Configuration comes from one TOML file (upstream RMS's key set, with the
// same names and defaults, plus rmsd's own sections) and from environment
// variables named RMS_<SECTION>__<KEY> (RMS_PORT for top-level keys), which
// override the file. DATABASE_URL overrides [postgres] db_url, as upstream.
// RMS_ALLOW_INSECURE is not a configuration key: it is the second switch of
// the plaintext gate (see Transport).
//
// Loading reports every problem at once: unknown keys by their dotted path,
// wrong types with the key and the expected type, and invalid values. The
// package holds no global state; callers pass sub-structs to whoever needs them.
package config

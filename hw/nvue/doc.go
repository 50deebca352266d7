// Package nvue is a client for the NVUE REST API of NVOS switches
// (/nvue_v1/...): system and platform information, chassis location,
// platform firmware listing and install, asynchronous action polling, NVOS
// system image management, configuration revisions (create, patch, apply,
// poll, save, delete) as used by password rotation, power cycle and factory
// reset.
//
// One Pool holds the HTTP transport and TLS policy every Client made from
// it shares, so a switch keeps one connection (one TLS handshake) across
// operations; a host endpoint on port 0 or 22 means NVUE on Options.Port.
// It speaks HTTPS with Basic authentication on every request and never
// replays a request. Errors wrap the package's sentinels (ErrUnauthorized,
// ErrPasswordExpired, ErrNotFound, ErrTransport, ErrServer, ErrTimeout,
// ErrInvalidResponse, ErrActionFailed, ErrRevisionFailed) so callers can map
// them to job error codes with errors.Is. Passwords never appear in errors
// or logs.
package nvue

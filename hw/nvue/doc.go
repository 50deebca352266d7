// Package nvue is a client for the NVUE REST API of NVOS switches
// (/nvue_v1/...): system and platform information, chassis location,
// platform firmware listing and install, asynchronous action polling, NVOS
// system image management, configuration revisions (create, patch, apply,
// poll, save, delete) as used by password rotation, power cycle and factory
// reset.
//
// It speaks HTTPS with Basic authentication on every request and never
// replays a request. Errors wrap the package's sentinels (ErrUnauthorized,
// ErrPasswordExpired, ErrNotFound, ErrTransport, ErrServer, ErrTimeout,
// ErrInvalidResponse, ErrActionFailed, ErrRevisionFailed) so callers can map
// them to job error codes with errors.Is. Passwords never appear in errors
// or logs.
package nvue

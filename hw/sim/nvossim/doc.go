// Package nvossim simulates the NVOS host of one NVLink switch tray: the NVUE
// REST API over HTTPS and an SSH server with an SFTP subsystem, both backed by
// one in-memory switch state (users and passwords, configuration revisions,
// NVOS partitions and image files, platform firmware components, asynchronous
// actions, reboot windows).
//
// Files uploaded over SFTP are what the NVUE API lists and installs; a
// password applied through an NVUE revision is the one SSH checks. Time in
// the simulator is wall-clock time multiplied by Config.TimeScale, so tests
// can run a full NVOS image update in well under a second. Fault knobs
// (rejected logins, unreachable windows, failing or slow actions, expired
// admin password, stalled SFTP uploads) are methods on Switch.
//
// The package owns no global state; every Switch is independent and Close
// stops every goroutine it started.
package nvossim

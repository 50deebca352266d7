// Package sshsftp is the SSH and SFTP client RMS uses on NVOS switch hosts:
// password login with an explicit host-key policy, remote commands with
// their exit status, SFTP uploads bounded by an overall timeout and a
// per-step stall timeout, remote file size probes, and the forced password
// change of an expired login on a PTY shell.
//
// Errors wrap the package's sentinels (ErrAuth, ErrConnect, ErrTimeout,
// ErrStalled, ErrHostKey, ErrNoHostKeyPolicy, ErrExit, ErrSFTP) so callers
// can map them to job error codes. Passwords never appear in errors or logs.
package sshsftp

// Package simssh holds what the simulators' SSH servers (the NVOS switch in
// hw/sim/nvossim, the compute host in hw/sim/hostsim) share: reading a
// session request's string payload, answering a command's exit status and
// splitting a command line into words, and an SFTP directory listing.
package simssh

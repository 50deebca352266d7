// Package simssh holds what the simulators' SSH servers (the NVOS switch in
// hw/sim/nvossim, the compute host in hw/sim/hostsim) share: the
// connection loop (ServeConn) and the request loop of a session channel
// (Session), reading a session request's string payload, answering a
// command's exit status, splitting a command line into words, and an SFTP
// directory listing. What a device runs stays in its simulator.
package simssh

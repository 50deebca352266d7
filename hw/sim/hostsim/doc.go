// Package hostsim simulates the host OS of a compute tray as RMS reaches it
// for in-band NIC firmware: an SSH server with password login, sudo -S, an
// SFTP subsystem over an in-memory file system, and the Mellanox tools RMS
// runs (mst start, mst status -v, flint query and burn, mktemp, rm,
// systemctl is-system-running), answering with the output of the real tools.
//
// Each host holds ConnectX-7, ConnectX-8 and BlueField-3 devices, each with
// a PSID, the version on its flash and the version it runs. A burn writes
// the flash; the running version follows only when the tray is power
// cycled (Activate), as on real adapters.
//
// A simulated firmware image is a file whose "PSID:" and "FW Version:"
// lines say what it holds (Image builds one); flint -i reads them.
//
// The package owns no global state; Close stops every goroutine a Host
// started.
package hostsim

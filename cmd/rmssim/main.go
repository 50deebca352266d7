// Command rmssim runs rmsd's rack simulator on its own: simulated GB200
// NVL72 racks whose BMCs (Redfish) and NVLink switch hosts (NVUE, SSH, SFTP)
// each listen on their own loopback address. It writes the inventory, a
// rack_manager.NodeSet in protobuf JSON, to [simulator] nodes_file, for use
// with any RMS client.
//
// Usage:
//
//	rmssim [--config /etc/rms/config.toml]
//	rmssim --help
//
// It reads the [simulator] and [logging] sections of the same configuration
// file as rmsd and runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(code)
}

// Command rmsctl is the operator's command line for rmsd: it calls the
// rack_manager.RackManager gRPC API to list racks and nodes, change power,
// read device info and firmware inventory, manage the firmware catalog,
// apply firmware and switch images, and follow jobs with a live progress
// view. Run `rmsctl --help` for the command tree; the commands live in
// cmd/rmsctl/internal/ctl.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rmsd/rmsd/cmd/rmsctl/internal/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ctl.Main(ctx, os.Args[1:], ctl.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}

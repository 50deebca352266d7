// Command rmsd is the rack management daemon: it serves the RMS gRPC API
// (rack_manager.RackManager and rack_manager_v2.RackManagerV2) on one port
// and drives rack hardware over Redfish, NVUE, SSH and SFTP.
//
// Usage:
//
//	rmsd [--config /etc/rms/config.toml] [--simulate]
//	rmsd --help
//	rmsd --version
//	rmsd nvssvt-sim ...   (the NVSSVT stand-in, see hw/sim/nvssvtsim)
//
// SIGINT or SIGTERM starts a graceful shutdown: health NOT_SERVING for
// [server] drain_delay_seconds while connections are still accepted, then
// the drain. The exit code is 0 after a clean shutdown and after --help or
// --version, 1 when start-up fails or a cluster member was blocked by the
// cluster (it exits for its supervisor to start it again, docs/cluster.md),
// and 2 for a command line rmsd cannot run (an unknown flag, a positional argument).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if len(os.Args) > 1 && os.Args[1] == nvssvtsim.Command {
		// `rmsd --simulate` runs its system validation scans this way.
		code := nvssvtsim.Main(ctx, os.Args[2:], os.Environ(), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	code := run(ctx, runOptions{
		Args:    os.Args[1:],
		Environ: os.Environ(),
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
	})
	stop()
	os.Exit(code)
}

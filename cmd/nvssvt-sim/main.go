// Command nvssvt-sim is a stand-in for NVIDIA's NVSSVT against the rack
// simulator's BMCs (see hw/sim/nvssvtsim): point [workflows] nvssvt_path
// at it to run StartSystemValidation against `rmssim`'s racks. `rmsd
// --simulate` needs no build of it: it runs the same stand-in as `rmsd
// nvssvt-sim`.
//
// Usage:
//
//	nvssvt-sim --dut-id ID --bmc HOST:PORT [--host HOST:PORT] --log-dir DIR
//	    --report FILE [--config-override JSON]
//
// with the BMC's login in NVSSVT_BMC_USERNAME and NVSSVT_BMC_PASSWORD.
// It exits 0 when every check passed, 1 when one failed, 2 on a usage
// error.
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
	code := nvssvtsim.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

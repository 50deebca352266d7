package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

// validationRunner builds the NVSSVT runner of StartSystemValidation from
// the [workflows] nvssvt_* keys. A configured executable must exist and be
// executable, or the start fails. With --simulate and no executable
// configured, the runner re-executes this very binary as the stand-in
// (`rmsd nvssvt-sim ...`, see main): nothing to build or install, and the
// stand-in always matches the daemon's contract.
func validationRunner(w config.Workflows, simulate bool, log logging.Logger) (*nvssvt.Runner, error) {
	cfg := nvssvt.Config{Path: w.NVSSVTPath, LogRoot: w.NVSSVTLogDir,
		Timeout: time.Duration(w.NVSSVTTimeoutSeconds) * time.Second, MaxOutput: w.NVSSVTMaxOutputBytes,
		MaxConcurrent: w.NVSSVTMaxConcurrent}
	switch {
	case cfg.Path != "":
		st, err := os.Stat(cfg.Path)
		switch {
		case err != nil:
			return nil, fmt.Errorf("workflows.nvssvt_path: %w", err)
		case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
			return nil, fmt.Errorf("workflows.nvssvt_path: %s is not an executable file", cfg.Path)
		}
	case simulate:
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find rmsd's own executable for the NVSSVT stand-in: %w", err)
		}
		cfg.Path, cfg.Args = self, []string{nvssvtsim.Command}
		log.Info().Str("nvssvt_path", self).Msg("system validation runs the built-in NVSSVT stand-in (rmsd nvssvt-sim)")
	default:
		log.Info().Msg("system validation is off: [workflows] nvssvt_path is not set")
	}
	return nvssvt.New(cfg), nil
}

package rmsserver

import (
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/racks"
)

// Deps are what the handlers call. A nil dependency makes its RPCs answer
// UNAVAILABLE rather than panic.
type Deps struct {
	// Version is the build version GetVersion answers.
	Version string
	// Jobs reads job state for the job-status RPCs.
	Jobs JobService
	// Racks holds the nodes registered with CreateNodes.
	Racks *racks.Registry
	// Nodes runs hardware operations (power, device info, runbooks).
	Nodes *nodeops.Runner
	// SwitchNVUE is how runbooks reach NVOS switch APIs directly.
	SwitchNVUE nvue.Options
	// Starter creates jobs (the job engine).
	Starter JobStarter
}

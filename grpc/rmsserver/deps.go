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
	// SwitchNVUE is the shared NVUE connection pool runbooks reach NVOS
	// switch APIs through directly (the one the node runner's adapters use).
	SwitchNVUE *nvue.Pool
	// Starter creates jobs (the job engine).
	Starter JobStarter
}

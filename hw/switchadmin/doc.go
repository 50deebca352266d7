// Package switchadmin runs the NVOS administration jobs of NVLink switch
// trays: password rotation (password.go), the NVOS factory reset
// (factoryreset.go) and the scale-up fabric's SDN factory default
// (sdnreset.go), as southbound §3.9 and §3.10 describe them.
//
// Each workflow is one job child on one switch, which the job engine holds
// for the job's whole life. Every device step is one short operation
// through the node runner (step.go); the waits between steps are here,
// bounded by Timing and ended early by the job's context. The package owns
// no clients and no state between jobs.
//
// A password given to a workflow never leaves it: job descriptions, errors
// and result documents name users, never passwords, and an error a device
// echoed one into is scrubbed before it is recorded.
package switchadmin

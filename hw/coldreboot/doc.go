// Package coldreboot is the GB200 rack cold-reboot runbook as a job
// workflow: graceful compute shutdown, power shelves off, wait for the trays
// to discharge, shelves on, wait for every BMC, wait for NVOS on every
// switch, compute on, wait for the OS to boot.
//
// The runbook is fail-fast with no rollback: the first stage that fails
// fails the job, and later stages do not run. While it runs, the job's
// description names the runbook step ("Rack reboot step 2-3: ..."); when it
// ends, result_json holds the timeline of every stage.
//
// Admission (one rack, at least one shelf, compute tray and switch, the
// endpoints each needs) is checked by Check before any job exists. The job
// engine holds the rack and every node for the job's whole life (a
// messages.Reservation, see grpc/rmsserver). From the moment the shelves go
// off, the runbook runs on messages.ShieldFromShutdown: a shutdown of rmsd
// lets it finish within the drain window rather than leave the rack dark.
package coldreboot

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
// endpoints each needs) is checked by Check before any job exists; holding
// the nodes and the rack is the caller's business (see grpc/rmsserver).
package coldreboot

// Package coldreboot is the GB200 rack cold-reboot runbook as a job
// workflow: graceful compute shutdown, power shelves off, wait for the trays
// to discharge, shelves on, wait for every BMC, wait for NVOS on every
// switch, compute on, wait for the OS to boot.
//
// The runbook is fail-fast: the first stage that fails fails the job, and
// later stages do not run. The one thing it undoes is the shelves: from the
// moment they go off, whatever ends the run early (a failed stage while
// they may be off, a cancel, the shutdown drain window about to end, a hard
// stop) has it power them back on first (guard.go), and the record says so.
// A shutdown alone lets it finish. While it runs, the job's description
// names the runbook step ("Rack reboot step 2-3: ..."); when it ends,
// result_json holds the timeline of every stage, the restore step's
// outcome and the rack's left-out nodes.
//
// Admission (one rack, at least one shelf, compute tray and switch, the
// endpoints each needs) is checked by Check before any job exists. The job
// engine holds the rack and every node for the job's whole life (a
// messages.Reservation, see grpc/rmsserver). The rack's registered nodes
// the request did not list (Plan.LeaveOut) lose power with the shelves
// too: their trays' power state is read before the shelves go off and
// those that were On are powered on again (leftout.go). A tray counts as
// discharged only when nothing answers its BMC (classify.go).
package coldreboot

package actors

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rmsd/rmsd/messages"
)

// runCleanup executes a job's cleanup plan after its worker exited. It waits
// for the plan's jobs (bounded by the plan's timeout and by engine Close),
// then removes the directory. A panic is contained and reported; it never
// affects any job's state.
func runCleanup(c *core, jobID string, plan *messages.CleanupPlan) (rep messages.CleanupReport) {
	rep = messages.CleanupReport{JobID: jobID, Path: plan.Dir}
	defer func() {
		if p := recover(); p != nil {
			rep.Result = messages.CleanupPanicked
			switch v := p.(type) {
			case string:
				rep.Err = v
			case error:
				rep.Err = v.Error()
			default:
				rep.Err = "unknown panic payload"
			}
			c.log.Error().Str("job_id", jobID).Str("path", plan.Dir).Str("panic", rep.Err).Msg("job cleanup panicked; resource may be leaked")
		}
	}()
	if len(plan.AfterJobs) > 0 && !c.awaitTerminal(plan.AfterJobs, plan.Timeout) {
		c.log.Warn().Str("job_id", jobID).Str("path", plan.Dir).Msg("cleanup timed out waiting for child jobs to become terminal")
		rep.Result = messages.CleanupSkipped
		return rep
	}
	info, err := os.Lstat(plan.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rep.Result = messages.CleanupNotFound
		return rep
	case err != nil:
		return cleanupFailed(c, rep, err)
	case !info.IsDir():
		return cleanupFailed(c, rep, fmt.Errorf("remove dir %s: not a directory", plan.Dir))
	}
	if err := c.removeDir(plan.Dir); err != nil {
		return cleanupFailed(c, rep, err)
	}
	rep.Result = messages.CleanupRemoved
	return rep
}

func cleanupFailed(c *core, rep messages.CleanupReport, err error) messages.CleanupReport {
	rep.Result = messages.CleanupFailed
	rep.Err = err.Error()
	c.log.Warn().Str("job_id", rep.JobID).Str("path", rep.Path).Err(err).Msg("tracked job cleanup failed to remove directory")
	return rep
}

// startParentCleanup runs a sealed batch parent's cleanup plan in a worker
// goroutine the engine waits for on Close. Every child is terminal when its
// parent is sealed, so the plan's AfterJobs are not waited for.
func (r *registry) startParentCleanup(id string, plan *messages.CleanupPlan) {
	c := r.core
	p := *plan
	p.AfterJobs = nil
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		report := runCleanup(c, id, &p)
		if c.onCleanup != nil {
			c.onCleanup(report)
		}
	}()
}

// Package timeline records the stages of a long workflow (a cold reboot,
// a switch system image update, a switch certificate install) for its
// job's result_json: each stage's status, message, times and details, and
// the run's start, last update, total duration and current stage, in the
// shape upstream's stage timelines have (job-model §3). Stages never
// reached when the run ends read "skipped".
//
// It is safe for concurrent use: a workflow records from its goroutine
// while nothing else reads until the run ends.
package timeline

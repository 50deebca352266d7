// Package docs holds rmsd's guides (operations.md, api.md, simulator.md
// and the generated config-reference.md). It has no code: its tests keep
// the guides in step with the code they describe, so a renamed RPC or a
// reworded log message fails a test instead of leaving a stale guide.
package docs

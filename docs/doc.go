// Package docs holds rmsd's guides (api.md, cli.md, workflows.md,
// operations.md, deployment.md, configuration.md, storage.md,
// upstream-differences.md, simulator.md, performance.md, development.md
// and the generated config-reference.md). It has no code: its tests keep
// the guides in step with the code they describe, so a renamed RPC or a
// reworded log message fails a test instead of leaving a stale guide, and
// they run api.md's examples against a real rmsd --simulate.
package docs

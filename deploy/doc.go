// Package deploy holds rmsd's packaging: the container image recipe
// (container/), the systemd unit (systemd/) and the Helm chart (helm/rmsd).
// It has no Go code of its own; its tests check the invariants of those
// files that no build here exercises (the image is never built in CI), and
// render the chart with the pinned Helm (.ci/helm.sh, or RMSD_HELM).
package deploy

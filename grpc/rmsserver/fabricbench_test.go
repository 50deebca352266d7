package rmsserver

import (
	"testing"
)

// BenchmarkFabricReconcile measures what a periodic reconcile costs on a
// converged rack against one that moves the primary (every switch read,
// two switches reconfigured, NMX-C configured again), through gRPC against
// the simulated rack (time scaled 1000×). Report the ratio of the two
// sub-benchmarks of one run:
//
//	go test -run '^$' -bench FabricReconcile -benchtime 5x ./grpc/rmsserver
func BenchmarkFabricReconcile(b *testing.B) {
	r := startReconcileRack(b)
	sw := r.switches()
	req := r.fabricRequest(testTopology)
	fabricStatus(b, r.reconcile(b, req))
	b.Run("no-change", func(b *testing.B) {
		for b.Loop() {
			fabricStatus(b, r.reconcile(b, req))
		}
	})
	b.Run("move-primary", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			primary := sw[i%len(sw)].ID
			moved := r.fabricRequest(testTopology)
			moved.PrimarySwitchNodeId = &primary
			fabricStatus(b, r.reconcile(b, moved))
		}
	})
}

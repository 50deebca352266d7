package fabric

import (
	"context"
	"testing"
)

// BenchmarkReads compares the per-call cost of the fabric's reads against
// one simulated switch: the NVUE cluster read (the baseline), an NMX-C
// Hello and an NMX-C static config read over the switch's one gRPC
// connection. Report ratios to the baseline, not absolute times.
func BenchmarkReads(b *testing.B) {
	for _, c := range []struct {
		name string
		read func(ctx context.Context, sw *Switch) error
	}{
		{"nvue-cluster", func(ctx context.Context, sw *Switch) error { _, err := sw.Cluster(ctx); return err }},
		{"nmxc-hello", func(ctx context.Context, sw *Switch) error { return sw.Hello(ctx) }},
		{"nmxc-static-config", func(ctx context.Context, sw *Switch) error {
			_, err := sw.StaticConfig(ctx, []ConfigKey{{File: FileFM, Key: KeyTopology}})
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := startRig(b, nil)
			r.sim.EnableCluster(true)
			ctx := context.Background()
			if err := c.read(ctx, r.sw); err != nil { // connect outside the loop
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := c.read(ctx, r.sw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

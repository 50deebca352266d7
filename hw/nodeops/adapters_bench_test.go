package nodeops

import (
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
)

// BenchmarkAdapterCache is what the runner keeps per BMC: B/op of "fill"
// is the memory of one more cached adapter (a compute tray's, with the map
// growth it causes), against the ≤ 64 KiB per BMC rmsd's resident set is
// held to; "hit" is an operation's lookup of its node's kept adapter, the
// cost left of what was a build per operation.
//
//	go test -run '^$' -bench AdapterCache -benchmem ./hw/nodeops
func BenchmarkAdapterCache(b *testing.B) {
	pool := redfish.NewPool(redfish.Options{})
	defer pool.Close()
	deps := platform.Deps{Redfish: pool, Logger: zerolog.Nop()}
	node := func(i int) (string, platform.Config) {
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		cfg := platform.Config{ID: fmt.Sprintf("compute-%d", i), RackID: "rack-1", Type: hw.ComputeGB200Nvidia,
			BMC: hw.Endpoint{IP: ip, Credentials: hw.UserPass("root", "0penBmc-secret")}}
		return cfg.BMC.Addr(443), cfg
	}
	b.Run("fill", func(b *testing.B) {
		// Every operation is a miss that keeps one more adapter: a cache
		// that has taken DefaultMaxAdapters is replaced by an empty one
		// (untimed), so no operation finds its key kept or evicts one.
		keys, cfgs := make([]string, DefaultMaxAdapters), make([]platform.Config, DefaultMaxAdapters)
		for i := range keys {
			keys[i], cfgs[i] = node(i)
		}
		a := newAdapters(DefaultMaxAdapters)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			j := i % DefaultMaxAdapters
			if j == 0 && i > 0 {
				b.StopTimer()
				a = newAdapters(DefaultMaxAdapters)
				b.StartTimer()
			}
			if _, err := a.get(deps, keys[j], cfgs[j]); err != nil {
				b.Fatal(err)
			}
		}
		if want := (b.N-1)%DefaultMaxAdapters + 1; a.size() != want {
			b.Fatalf("the cache keeps %d adapters, want %d", a.size(), want)
		}
	})
	b.Run("hit", func(b *testing.B) {
		a := newAdapters(DefaultMaxAdapters)
		key, cfg := node(1)
		if _, err := a.get(deps, key, cfg); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.get(deps, key, cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build", func(b *testing.B) { // what every operation did before
		_, cfg := node(1)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := platform.New(deps, cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

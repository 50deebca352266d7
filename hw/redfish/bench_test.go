package redfish_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

const (
	benchRacks       = 25
	benchPerRack     = 40 // 25 × 40 = 1,000 BMCs
	benchConcurrency = 128
)

// BenchmarkPowerState1000 starts 1,000 simulated compute BMCs and reads
// all their power states concurrently, through the Redfish client and, as
// the baseline, as plain HTTPS GETs of the same resource to the same
// listeners. One op is one baseline sweep plus one client sweep over the
// 1,000 BMCs; "client/baseline" is the time ratio (target ≤ 1.25).
func BenchmarkPowerState1000(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := sim.Start(ctx, sim.Options{Racks: benchRacks, Layout: sim.Layout{Compute: benchPerRack},
		NoSwitchHosts: true, Network: testNetwork + 10})
	if err != nil {
		b.Fatalf("start 1,000 BMCs: %v", err)
	}
	defer f.Close()
	eps := make([]hw.Endpoint, 0, benchRacks*benchPerRack)
	for _, n := range f.Nodes() {
		eps = append(eps, n.BMC)
	}
	if len(eps) != 1000 {
		b.Fatalf("started %d BMCs, want 1000", len(eps))
	}

	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // simulator
		MaxIdleConns:        redfish.DefaultMaxIdleConns,
		MaxIdleConnsPerHost: redfish.DefaultMaxIdleConnsPerHost,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	baseline := func(ep hw.Endpoint) error {
		rctx, cancel := context.WithTimeout(ctx, redfish.DefaultRequestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet,
			"https://"+ep.Addr(443)+"/redfish/v1/Systems/System_0", nil)
		if err != nil {
			return err
		}
		req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}

	p := redfish.NewPool(redfish.Options{})
	defer p.Close()
	clients := make(map[string]*redfish.Client, len(eps))
	for _, ep := range eps {
		c, err := p.Client(ep)
		if err != nil {
			b.Fatal(err)
		}
		clients[ep.IP] = c
	}
	client := func(ep hw.Endpoint) error {
		st, err := clients[ep.IP].SystemPowerState(ctx)
		if err == nil && st != redfish.PowerOn {
			err = fmt.Errorf("power %s", st)
		}
		return err
	}

	// Warm every connection of both transports, then alternate which one
	// goes first so neither profits from the order.
	for _, read := range []func(hw.Endpoint) error{baseline, client} {
		if err := sweep(eps, read); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
	var tBase, tClient time.Duration
	timed := func(read func(hw.Endpoint) error, acc *time.Duration) {
		start := time.Now()
		if err := sweep(eps, read); err != nil {
			b.Fatal(err)
		}
		*acc += time.Since(start)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			timed(baseline, &tBase)
			timed(client, &tClient)
		} else {
			timed(client, &tClient)
			timed(baseline, &tBase)
		}
	}
	b.StopTimer()
	n := float64(len(eps) * b.N)
	b.ReportMetric(n/tBase.Seconds(), "baseline-reads/s")
	b.ReportMetric(n/tClient.Seconds(), "client-reads/s")
	b.ReportMetric(float64(tClient)/float64(tBase), "client/baseline")
}

// sweep reads every endpoint with benchConcurrency workers.
func sweep(eps []hw.Endpoint, read func(hw.Endpoint) error) error {
	work := make(chan hw.Endpoint)
	errs := make(chan error, len(eps))
	var wg sync.WaitGroup
	for w := 0; w < benchConcurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ep := range work {
				if err := read(ep); err != nil {
					errs <- fmt.Errorf("%s: %w", ep.IP, err)
				}
			}
		}()
	}
	for _, ep := range eps {
		work <- ep
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// BenchmarkDeviceClient builds the client of one BMC, as every node
// operation does (hw/nodeops builds the node's adapter per operation):
// read its allocations against the requests the operation then sends.
//
//	go test -run '^$' -bench DeviceClient -benchmem ./hw/redfish
func BenchmarkDeviceClient(b *testing.B) {
	o := fastOptions()
	o.Logger = zerolog.New(io.Discard).Level(zerolog.InfoLevel)
	p := redfish.NewPool(o)
	defer p.Close()
	ep := hw.Endpoint{IP: "127.0.0.1", Port: 8443, Credentials: hw.UserPass("admin", "secret")}
	for b.Loop() {
		if _, err := p.DeviceClient(hw.KindCompute, ep); err != nil {
			b.Fatal(err)
		}
	}
}

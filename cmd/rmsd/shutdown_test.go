package main

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestShutdownReportsNotServingDuringTheDrainDelay: after the shutdown
// signal, and for [server] drain_delay_seconds, a new connection still
// reaches the daemon and health answers NOT_SERVING; when the delay ends
// the daemon drains and exits 0. The test holds the delay open through
// runOptions.After, so nothing depends on how fast the machine is.
func TestShutdownReportsNotServingDuringTheDrainDelay(t *testing.T) {
	delays := make(chan time.Duration, 1)
	endDelay := make(chan time.Time)
	d := startRunWith(t, runOptions{
		Args:    []string{"--config", writeFile(t, insecureLoopback)},
		Environ: []string{"RMS_ALLOW_INSECURE=1", "RMS_SERVER__DRAIN_DELAY_SECONDS=7"},
		After: func(delay time.Duration) <-chan time.Time {
			delays <- delay
			return endDelay
		},
	})

	addr, ok := logLine(t, d.stdout.String(), "metrics serving")["addr"].(string)
	if !ok {
		t.Fatal("no address in the metrics serving line")
	}
	signalled := time.Now()
	d.stop() // the signal
	select {
	case delay := <-delays:
		if delay != 7*time.Second {
			t.Fatalf("drain delay = %v, want 7s from RMS_SERVER__DRAIN_DELAY_SECONDS", delay)
		}
	case code := <-d.exit:
		t.Fatalf("daemon exited %d without a drain delay", code)
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not start its drain delay within 10s of the signal")
	}

	// A connection made only now, as a probe would.
	conn, err := grpc.NewClient(d.addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, svc := range []string{"", "rack_manager.RackManager", "rack_manager_v2.RackManagerV2"} {
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Health/Check(%q) during the drain delay: %v; the listener must still accept connections", svc, err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("Health/Check(%q) during the drain delay = %v, want NOT_SERVING", svc, resp.GetStatus())
		}
	}
	// Reads still work: callers that have not noticed yet are not failed.
	if _, err := rmspb.NewRackManagerClient(conn).GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
		t.Fatalf("GetVersion during the drain delay: %v", err)
	}
	// The drain's start is on /metrics while it lasts, for an alert on
	// a drain that takes too long.
	started := sample(scrape(t, addr), "rmsd_drain_start_timestamp_seconds", nil).GetGauge().GetValue()
	if started < float64(signalled.Unix()) || started > float64(time.Now().Unix()) {
		t.Errorf("rmsd_drain_start_timestamp_seconds = %v during the drain, want the signal's time %d", started, signalled.Unix())
	}
	select {
	case code := <-d.exit:
		t.Fatalf("daemon exited %d before its drain delay ended", code)
	default:
	}

	close(endDelay)
	select {
	case code := <-d.exit:
		if code != 0 {
			t.Fatalf("exit code %d after the drain delay, want 0; stderr: %s", code, d.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("daemon did not exit within 20s of the end of its drain delay")
	}
}

package hw

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a table; unknown names fail.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

// blockingResolver answers only when its context ends.
type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCanonicalKeysNameOneDeviceOnce(t *testing.T) {
	r := fakeResolver{
		"bmc-05.rack-001.example": {netip.MustParseAddr("10.0.1.5")},
		"two.example":             {netip.MustParseAddr("10.0.9.9"), netip.MustParseAddr("10.0.1.7")},
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ep   Endpoint
		want string
	}{
		{"ip, default port", Endpoint{IP: "10.0.1.5"}, "bmc 10.0.1.5:443"},
		{"ip, explicit default port", Endpoint{IP: "10.0.1.5", Port: 443}, "bmc 10.0.1.5:443"},
		{"other port", Endpoint{IP: "10.0.1.5", Port: 8443}, "bmc 10.0.1.5:8443"},
		{"mapped ipv4", Endpoint{IP: "::ffff:10.0.1.5"}, "bmc 10.0.1.5:443"},
		{"ipv6", Endpoint{IP: "fd00::5", Port: 443}, "bmc [fd00::5]:443"},
		{"resolved name", Endpoint{HostName: "BMC-05.rack-001.example."}, "bmc 10.0.1.5:443"},
		{"lowest address of several", Endpoint{HostName: "two.example"}, "bmc 10.0.1.7:443"},
		{"unresolved name", Endpoint{HostName: "Gone.Example.", Port: 443}, "bmc gone.example:443"},
	} {
		if got := BMCKey(ctx, r, &tc.ep); got != tc.want {
			t.Errorf("%s: BMCKey = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := HostKey(ctx, r, &Endpoint{IP: "10.0.2.1", Port: 22}); got != "host 10.0.2.1" {
		t.Errorf("HostKey = %q, want the address without the port", got)
	}
	if BMCKey(ctx, r, nil) != "" || BMCKey(ctx, r, &Endpoint{}) != "" || HostKey(ctx, r, nil) != "" {
		t.Error("an absent endpoint has a key")
	}
	n := Node{BMC: &Endpoint{IP: "10.0.1.5"}, Host: &Endpoint{HostName: "bmc-05.rack-001.example"}}
	got := n.DeviceKeys(ctx, r)
	if len(got) != 2 || got[0] != "bmc 10.0.1.5:443" || got[1] != "host 10.0.1.5" {
		t.Errorf("DeviceKeys = %q", got)
	}
}

func TestCanonicalAddrFallsBackWhenTheResolverHangs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the bound is ResolveTimeout; a cancelled caller ends it at once
	if got := CanonicalAddr(ctx, blockingResolver{}, "Slow.Example"); got != "slow.example" {
		t.Fatalf("CanonicalAddr = %q, want the lower-cased name", got)
	}
}

// TestDeviceKeysOfResolvesInParallel: names that hang are looked up side
// by side, so a batch ends within a few resolve bounds, not one per node.
func TestDeviceKeysOfResolvesInParallel(t *testing.T) {
	nodes := make([]Node, 2*resolveParallel)
	for i := range nodes {
		nodes[i] = Node{BMC: &Endpoint{HostName: fmt.Sprintf("bmc-%02d.example", i)}}
	}
	nodes[0] = Node{BMC: &Endpoint{IP: "10.0.1.5"}}
	r := &countingResolver{release: make(chan struct{})}
	done := make(chan [][]string)
	go func() { done <- DeviceKeysOf(context.Background(), r, nodes) }()
	// resolveParallel look-ups are under way at the same time before any
	// answers (one at a time, at most one would be).
	deadline := time.Now().Add(10 * time.Second)
	for r.inFlight.Load() < resolveParallel {
		if time.Now().After(deadline) {
			t.Fatalf("at most %d look-ups under way at once, want %d", r.inFlight.Load(), resolveParallel)
		}
		runtime.Gosched()
	}
	close(r.release)
	keys := <-done
	if keys[0][0] != "bmc 10.0.1.5:443" || keys[1][0] != "bmc bmc-01.example:443" || len(keys) != len(nodes) {
		t.Fatalf("keys %q", keys)
	}
}

// countingResolver counts the look-ups under way; each fails once
// release is closed (or its bound ends).
type countingResolver struct {
	inFlight atomic.Int32
	release  chan struct{}
}

func (c *countingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	select {
	case <-c.release:
	case <-ctx.Done():
	}
	return nil, errors.New("no such host")
}

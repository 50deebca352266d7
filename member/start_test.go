package member

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// protoactor's throttles (actor.NewThrottle*, gossip's): each first
		// event starts a one-shot goroutine that ends 60 s later, and
		// nothing stops it when the cluster shuts down. Protoactor's own;
		// it holds nothing of rmsd's.
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.(*Gossiper).StartGossiping.NewThrottle.func3.1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.NewGossipActor.NewThrottleWithLogger.func2.1"),
	)
}

// noStore is a Store that is never reached: Start refuses before.
type noStore struct {
	store.RackOwners
	store.ClusterMembers
}

func (noStore) ListRacks(context.Context) ([]store.RackRecord, error) { return nil, nil }

// TestStartRefusesBeforeJoining: settings a member cannot run with, and a
// health port another process has, are refused before any actor system,
// listener or goroutine is started.
func TestStartRefusesBeforeJoining(t *testing.T) {
	busy, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ok := Config{MemberID: "m-a", AdvertisedHost: "127.0.0.1", Port: 1, Seeds: []string{"127.0.0.1:1"},
		AutomanagedPort: busy.Addr().(*net.TCPAddr).Port, MembershipTimeout: time.Second, Store: noStore{}}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no member id", func(c *Config) { c.MemberID = "" }, "no member id"},
		{"no store", func(c *Config) { c.Store = nil }, "no store"},
		{"no seeds", func(c *Config) { c.Seeds = nil }, "no seeds"},
		{"timeout too short", func(c *Config) { c.MembershipTimeout = time.Millisecond }, "membership timeout below"},
		{"health port in use", func(*Config) {}, "the automanaged health port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			m, err := Start(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				if m != nil {
					m.Stop()
				}
				t.Fatalf("Start = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestTickIsAQuarterOfTheTimeout(t *testing.T) {
	if got := (Config{MembershipTimeout: 10 * time.Second}).tick(); got != 2500*time.Millisecond {
		t.Errorf("tick = %s, want 2.5s", got)
	}
}

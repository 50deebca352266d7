package member

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/test/freeport"
)

// The etcd provider's run with members is tested with rmsd processes
// (cmd/rmsd, TestClusterMembersThroughEtcd): protoactor's etcd provider
// has data races of its own (its shutdown flag, read by its keep-alive
// goroutine without synchronisation), which fail any race-enabled test
// binary that runs it in process.

// freePort is a TCP port to bind later (test/freeport).
func freePort(t *testing.T) int { return freeport.Port(t) }

// TestEtcdUnreachableIsRefused: a member whose etcd does not answer is
// refused within the dial timeout, naming the endpoints, instead of
// waiting for etcd for ever.
func TestEtcdUnreachableIsRefused(t *testing.T) {
	dead := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	m, err := Start(Config{
		MemberID: "m-etcd", AdvertisedHost: "127.0.0.1", Port: freePort(t),
		Provider: ProviderEtcd, EtcdEndpoints: []string{dead}, EtcdPrefix: "/rmsd-test",
		MembershipTimeout: time.Second, Store: noStore{},
	})
	if err == nil {
		m.Stop()
		t.Fatal("Start with an unreachable etcd succeeded")
	}
	if !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), dead) {
		t.Errorf("Start = %v, want an error naming %s that does not answer", err, dead)
	}
}

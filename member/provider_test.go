package member

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// The etcd provider's run with members is tested with rmsd processes
// (cmd/rmsd, TestClusterMembersThroughEtcd): protoactor's etcd provider
// has data races of its own (its shutdown flag, read by its keep-alive
// goroutine without synchronisation), which fail any race-enabled test
// binary that runs it in process.

// freePort returns a TCP port free on loopback at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

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

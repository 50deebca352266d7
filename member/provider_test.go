package member

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// The etcd provider's run with members is tested with rmsd processes
// (cmd/rmsd, TestClusterMembersThroughEtcd): protoactor's etcd provider
// has data races of its own (its shutdown flag, read by its keep-alive
// goroutine without synchronisation), which fail any race-enabled test
// binary that runs it in process.

// providerWait bounds every wait on a member: a one-second membership
// timeout settles in a few seconds; this is generous on a loaded machine.
const providerWait = 60 * time.Second

// sixRacks opens a fresh PostgreSQL database with six registered racks.
func sixRacks(t *testing.T) (*sqlstore.Store, []string) {
	t.Helper()
	st, err := sqlstore.OpenPostgres(t.Context(), storetest.TempPostgresDatabase(t), 4, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var racks []string
	for i := 1; i <= 6; i++ {
		r := fmt.Sprintf("rack-%d", i)
		if err := st.PutRack(t.Context(), store.RackRecord{RackID: r, Family: "GB200"}); err != nil {
			t.Fatal(err)
		}
		racks = append(racks, r)
	}
	return st, racks
}

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

// untilOwnedBy waits until every rack's unexpired lease is member's.
func untilOwnedBy(t *testing.T, st *sqlstore.Store, member string, racks []string) {
	t.Helper()
	deadline := time.Now().Add(providerWait)
	poll := time.NewTicker(50 * time.Millisecond) // a bounded poll of the store
	defer poll.Stop()
	for {
		why := ""
		for _, r := range racks {
			l, err := st.RackOwner(t.Context(), r)
			if err != nil || l.Member != member || !l.Expires.After(time.Now()) {
				why = fmt.Sprintf("rack %s: %+v, %v", r, l, err)
				break
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("racks not owned by %s within %s: %s", member, providerWait, why)
		}
		<-poll.C
	}
}

// allReleased fails t for every rack whose lease has not ended.
func allReleased(t *testing.T, st *sqlstore.Store, racks []string) {
	t.Helper()
	for _, r := range racks {
		if l, err := st.RackOwner(t.Context(), r); err != nil || l.Expires.After(time.Now()) {
			t.Errorf("rack %s after Stop: %+v, %v; want its lease released", r, l, err)
		}
	}
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

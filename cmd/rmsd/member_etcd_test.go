package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rmsd/rmsd/member/etcdtest"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// startEtcdMemberProcess starts member id on the shared database, finding
// the others through the etcd at endpoint.
func startEtcdMemberProcess(t *testing.T, dbURL, id string, remotePort int, endpoint string) *memberProcess {
	t.Helper()
	return launchMemberProcess(t, []string{os.Args[0], asDaemon}, id, writeFile(t, insecureLoopback+fmt.Sprintf(`[postgres]
db_url = %q
[cluster]
enabled = true
member_id = %q
advertised_address = "127.0.0.1:%d"
provider = "etcd"
etcd_endpoints = %q
etcd_prefix = "/rmsd-test"
membership_timeout_seconds = 3
`, dbURL, id, remotePort, endpoint)))
}

// TestClusterMembersThroughEtcd runs two rmsd members that find each
// other through a real etcd, with one PostgreSQL store and six racks:
// every rack ends with exactly one grain, on the member holding its lease
// (which it cannot unless the members see each other: alone, each would
// activate every rack); a member killed with SIGKILL drops out when its
// etcd lease ends and the survivor owns all six, under higher epochs; the
// survivor, stopped with SIGTERM, exits 0 and releases them.
func TestClusterMembersThroughEtcd(t *testing.T) {
	endpoint := etcdtest.Start(t)
	dbURL := storetest.TempPostgresDatabase(t)
	st, err := sqlstore.OpenPostgres(t.Context(), dbURL, 2, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	racks := []string{"rack-1", "rack-2", "rack-3", "rack-4", "rack-5", "rack-6"}
	for _, r := range racks {
		if err := st.PutRack(t.Context(), store.RackRecord{RackID: r, Family: "GB200"}); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 2)
	a := startEtcdMemberProcess(t, dbURL, "member-a", ports[0], endpoint)
	b := startEtcdMemberProcess(t, dbURL, "member-b", ports[1], endpoint)

	before := untilSettled(t, st, racks, a, b)
	t.Logf("through etcd: %s has %d racks, %s %d", a.id, len(a.active()), b.id, len(b.active()))
	victim, survivor := a, b
	if len(b.active()) > len(a.active()) {
		victim, survivor = b, a
	}
	lost := victim.active()

	killed := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-victim.exited:
	case <-time.After(clusterWait):
		t.Fatalf("%s did not die", victim.id)
	}
	victim.mu.Lock()
	victim.activeRacks = map[string]int{} // its grains died with it
	victim.mu.Unlock()

	after := untilSettled(t, st, racks, survivor)
	t.Logf("%s's %d racks served by %s again %s after the kill (etcd lease 3s, membership timeout 3s)",
		victim.id, len(lost), survivor.id, time.Since(killed).Round(10*time.Millisecond))
	for r := range lost {
		if after[r].Member != survivor.id || after[r].Epoch <= before[r].Epoch {
			t.Errorf("rack %s after the kill: %+v, want %s under an epoch above %d", r, after[r], survivor.id, before[r].Epoch)
		}
	}

	if err := survivor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-survivor.exited:
		if survivor.err != nil {
			t.Errorf("%s stopped with %v", survivor.id, survivor.err)
		}
	case <-time.After(clusterWait):
		t.Fatalf("%s did not stop on SIGTERM", survivor.id)
	}
	for _, r := range racks {
		l, err := st.RackOwner(t.Context(), r)
		if err != nil || l.Expires.After(time.Now()) {
			t.Errorf("rack %s after the survivor stopped: %+v, %v; want its lease released", r, l, err)
		}
	}
}

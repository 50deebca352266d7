package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/clustersite"
)

// clusterWait bounds every wait on the cluster: a three-second membership
// timeout settles within a few seconds; this is generous on a loaded
// machine.
const clusterWait = 60 * time.Second

// startSite starts a clustersite of o on a private PostgreSQL database,
// in a directory of the test, with each member's race reports checked
// when the test ends (raceLogEnv). The site is closed when the test ends,
// and the members' logs are logged if it failed.
func startSite(t *testing.T, o clustersite.Options) *clustersite.Site {
	t.Helper()
	o.Dir, o.DatabaseURL, o.Wait = t.TempDir(), storetest.TempPostgresDatabase(t), clusterWait
	o.MemberEnv = func(id string) []string { return []string{raceLogEnv(t, id)} }
	s, err := clustersite.Start(t.Context(), o) // closed already if err
	logs := func() {
		for _, m := range s.Members {
			t.Logf("member %s output:\n%s", m.ID, m.Log())
		}
	}
	if err != nil {
		logs()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			logs()
		}
	})
	return s
}

// untilSettled waits until ownership of racks settles across members
// (clustersite.Site.Settled), and returns the leases by rack.
func untilSettled(t *testing.T, s *clustersite.Site, racks []string, members ...*clustersite.Member) map[string]store.RackLease {
	t.Helper()
	leases, err := s.UntilSettled(t.Context(), racks, members...)
	if err != nil {
		t.Fatal(err)
	}
	return leases
}

// TestClusterMembersShareRacksAndTakeOverAKilledMembersRacks runs two rmsd
// members (the test binary as rmsd, see TestMain) on loopback with one
// PostgreSQL store and six registered racks: every rack ends with exactly
// one grain, on the member holding its lease; a member killed with
// SIGKILL has its racks taken by the survivor, under higher epochs, once
// the membership timeout and its leases have passed; the survivor,
// stopped with SIGTERM, releases its racks.
func TestClusterMembersShareRacksAndTakeOverAKilledMembersRacks(t *testing.T) {
	membersShareRacksAndTakeOver(t, "")
}

// membersShareRacksAndTakeOver is the test above with the members finding
// each other through the etcd at etcdEndpoint, or the automanaged
// provider when it is empty.
func membersShareRacksAndTakeOver(t *testing.T, etcdEndpoint string) {
	racks := []string{"rack-1", "rack-2", "rack-3", "rack-4", "rack-5", "rack-6"}
	s := startSite(t, clustersite.Options{
		Members: 2, Command: []string{os.Args[0], asDaemon}, MembershipTimeout: 3, EtcdEndpoint: etcdEndpoint,
		Seed: func(ctx context.Context, st *sqlstore.Store) error {
			for _, r := range racks {
				if err := st.PutRack(ctx, store.RackRecord{RackID: r, Family: "GB200"}); err != nil {
					return err
				}
			}
			return nil
		},
	})
	a, b := s.Members[0], s.Members[1]

	before := untilSettled(t, s, racks, a, b)
	vi, si := 0, 1
	if len(b.Grains()) > len(a.Grains()) {
		vi, si = 1, 0
	}
	victim, survivor := s.Members[vi], s.Members[si]
	lost := victim.Grains()
	t.Logf("before the kill: %s has %d racks, %s %d", a.ID, len(a.Grains()), b.ID, len(b.Grains()))

	killed := time.Now()
	if err := s.Kill(vi); err != nil { // its grains die with it
		t.Fatal(err)
	}

	after := untilSettled(t, s, racks, survivor)
	t.Logf("%s's %d racks served by %s again %s after the kill (membership timeout 3s, etcd %q)", victim.ID, len(lost), survivor.ID,
		time.Since(killed).Round(10*time.Millisecond), etcdEndpoint)
	for r := range lost {
		if after[r].Member != survivor.ID || after[r].Epoch <= before[r].Epoch {
			t.Errorf("rack %s after the kill: %+v, want %s under an epoch above %d", r, after[r], survivor.ID, before[r].Epoch)
		}
	}

	// Stop fails unless the survivor exits 0 after SIGTERM.
	if err := s.Stop(si); err != nil {
		t.Error(err)
	}
	for _, r := range racks {
		l, err := s.Store.RackOwner(t.Context(), r)
		if err != nil || l.Expires.After(time.Now()) {
			t.Errorf("rack %s after the survivor stopped: %+v, %v; want its lease released", r, l, err)
		}
	}
}

// raceLogEnv, for a member process of a race-enabled test binary, sends
// the race detector's reports to files that checkRaces reads when the
// test ends: protoactor's gossip has a data race of its own (its gossip
// actor writes a state that remote is still serializing), which would
// otherwise fail every member; a race with a frame of rmsd's own code
// still fails the test.
func raceLogEnv(t *testing.T, id string) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { checkRaces(t, id, dir) })
	return "GORACE=exitcode=0 log_path=" + filepath.Join(dir, "race")
}

// checkRaces fails t for every race report in dir one of whose two
// conflicting accesses is made by rmsd's own code (the access's innermost
// frame). A race inside protoactor reached through rmsd's calls (its
// gossip's, or its distributed hash read during a topology update) is
// protoactor's own and only logged.
func checkRaces(t *testing.T, id, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "race*"))
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, report := range strings.Split(string(body), "WARNING: DATA RACE")[1:] {
			top, ours := false, false
			for _, line := range strings.Split(report, "\n") {
				trimmed := strings.TrimSpace(line)
				switch {
				case strings.Contains(trimmed, " at 0x") && (strings.HasPrefix(trimmed, "Write") || strings.HasPrefix(trimmed, "Read") || strings.HasPrefix(trimmed, "Previous")):
					top = true
				case top && trimmed != "" && !strings.HasPrefix(trimmed, "/"):
					ours = ours || strings.HasPrefix(trimmed, "github.com/rmsd/rmsd/")
					top = false
				}
			}
			if ours {
				t.Errorf("member %s: data race in rmsd's code:%s", id, report)
			} else {
				t.Logf("member %s: protoactor's own data race (ignored)", id)
			}
		}
	}
}

// TestClusterMemberStartRefusals: what cluster mode cannot do yet is
// refused at start with a message naming the setting, before any store is
// opened or port bound.
func TestClusterMemberStartRefusals(t *testing.T) {
	const base = `[postgres]
db_url = "postgres://postgres@127.0.0.1:1/none"
[cluster]
enabled = true
member_id = "m-a"
advertised_address = "127.0.0.1:7000"
seeds = "127.0.0.1:6330"
`
	for _, tc := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"no encryption key", base, nil, "cluster mode needs [storage] encryption_key_file"},
		{"simulation", base, []string{"--simulate"}, "--simulate cannot run as a cluster member yet"},
		{"sqlite", strings.Replace(base, `db_url = "postgres://postgres@127.0.0.1:1/none"`, "", 1), nil,
			"cluster.enabled: a cluster needs the PostgreSQL store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			args := append([]string{"--config", writeFile(t, tc.config)}, tc.args...)
			code := run(t.Context(), runOptions{Args: args, Environ: withStorage(t, nil), Stdout: &stdout, Stderr: &stderr})
			if code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}

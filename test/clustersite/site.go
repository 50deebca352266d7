package clustersite

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/test/freeport"
)

// Options say what site to run.
type Options struct {
	Racks, Members int
	// Binary is the rmsd to run; empty builds cmd/rmsd into Dir, with
	// the race detector if Race (docs/cluster.md, Known upstream issue:
	// race-instrumented members on a loaded machine can miss protoactor's
	// health check).
	Binary string
	Race   bool
	// Command, when set, runs a member instead of Binary: the command
	// line that `--config <file>` is appended to (a test binary that
	// runs as rmsd, say).
	Command []string
	// MemberEnv, when set, gives the environment a member adds to the
	// site's at each of its starts (a race log per member, say).
	MemberEnv func(id string) []string
	// Dir holds the members' configurations and logs.
	Dir string
	// PostgresURL is the server the site's database is created on
	// (DefaultAdminURL when empty).
	PostgresURL string
	// DatabaseURL, when set, is an existing database the site uses
	// instead of creating one (and it does not drop it).
	DatabaseURL string
	// Seed, when set, writes the store before any member starts.
	Seed func(ctx context.Context, st *sqlstore.Store) error
	// EtcdEndpoint, when set, makes the members find each other through
	// the etcd there (provider "etcd") instead of the automanaged
	// provider.
	EtcdEndpoint string
	// MembershipTimeout is [cluster] membership_timeout_seconds;
	// DrainTimeout is [workflows] drain_timeout_seconds.
	// Zero leaves rmsd's default.
	MembershipTimeout, DrainTimeout int
	// Partitionable routes the members' traffic to each other through
	// proxies that Partition and Heal control (partition.go; Linux).
	Partitionable bool
	// Wait bounds each wait on a member (start, stop) and the
	// registration of the site's nodes.
	Wait time.Duration
}

// Site is a running site.
type Site struct {
	Fleet *sim.Fleet
	// Nodes is every simulated node; Racks the same by rack.
	Nodes   *rmspb.NodeSet
	Racks   map[string][]*rmspb.NodeInfo
	Members []*Member
	// Store is the site's database, as the members share it.
	Store *sqlstore.Store
	// FirmwareDir is the members' shared [workflows] firmware_dir: the
	// packages a firmware request names are staged there.
	FirmwareDir string

	o       Options
	dbURL   string
	dropDB  bool
	cmdline []string
	env     []string
	ports   []int // remote ports, then automanaged ports
	part    *partition
}

// Start starts the simulator (of o.Racks racks, none if zero), creates
// the database, starts every member and registers every simulated node
// through the first one.
func Start(ctx context.Context, o Options) (s *Site, err error) {
	if o.PostgresURL == "" {
		o.PostgresURL = DefaultAdminURL
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Minute
	}
	s = &Site{o: o, Racks: map[string][]*rmspb.NodeInfo{}, Nodes: &rmspb.NodeSet{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if o.Binary == "" && o.Command == nil {
		if o.Binary, err = Build(ctx, o.Dir, o.Race); err != nil {
			return s, err
		}
	}
	var switchEnv []string
	if o.Racks > 0 {
		if s.Fleet, err = sim.Start(ctx, sim.Options{Racks: o.Racks, TimeScale: timeScale, Timing: siteTiming, Network: 89, ComputeHosts: true, Logger: zerolog.Nop()}); err != nil {
			return s, fmt.Errorf("start the rack simulator: %w", err)
		}
		for _, n := range s.Fleet.Nodes() {
			ni := nodeInfo(n)
			s.Racks[n.RackID] = append(s.Racks[n.RackID], ni)
			s.Nodes.Nodes = append(s.Nodes.Nodes, ni)
		}
		switchEnv = []string{"RMS_SWITCHES__NVUE_PORT=" + strconv.Itoa(s.Fleet.NVUEPort()), "RMS_SWITCHES__SSH_PORT=" + strconv.Itoa(s.Fleet.SSHPort()),
			"RMS_SWITCHES__INSECURE_SWITCH=true"}
	}
	s.dbURL = o.DatabaseURL
	if s.dbURL == "" {
		if s.dbURL, err = createDatabase(ctx, o.PostgresURL); err != nil {
			return s, err
		}
		s.dropDB = true
	}
	if s.Store, err = sqlstore.OpenPostgres(ctx, s.dbURL, 2, sqlstore.Options{}); err != nil {
		return s, fmt.Errorf("open the site's database: %w", err)
	}
	if o.Seed != nil {
		if err := o.Seed(ctx, s.Store); err != nil {
			return s, fmt.Errorf("seed the site's database: %w", err)
		}
	}
	// Remote ports, automanaged ports, and a partitionable site's seed
	// proxies (one per ordered pair of members).
	nports := 2 * o.Members
	if o.Partitionable {
		nports += o.Members * o.Members
	}
	if s.ports, err = freeport.Ports(nports); err != nil {
		return s, err
	}
	var seeds []string
	for i := range o.Members {
		seeds = append(seeds, "127.0.0.1:"+strconv.Itoa(s.ports[o.Members+i]))
	}
	// Member i's seeds and advertised host: the shared list and loopback,
	// or, partitionable, the proxies of its pairs and its own address.
	memberSeeds := func(int) string { return strings.Join(seeds, ",") }
	advertised := func(int) string { return "127.0.0.1" }
	if o.Partitionable {
		extra := s.ports[2*o.Members:]
		seedPorts := make([][]int, o.Members)
		for i := range o.Members {
			seedPorts[i] = extra[i*o.Members : (i+1)*o.Members]
		}
		if err := s.startPartition(seedPorts); err != nil {
			return s, err
		}
		memberSeeds = func(i int) string {
			var own []string
			for j := range o.Members {
				if i == j {
					own = append(own, seeds[j])
				} else {
					own = append(own, "127.0.0.1:"+strconv.Itoa(seedPorts[i][j]))
				}
			}
			return strings.Join(own, ",")
		}
		advertised = advertisedHost
	}
	keys := filepath.Join(o.Dir, "store-keys")
	key := "k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)) + "\n"
	if err := os.WriteFile(keys, []byte(key), 0o600); err != nil {
		return s, err
	}
	s.FirmwareDir = filepath.Join(o.Dir, "firmware")
	if err := os.MkdirAll(s.FirmwareDir, 0o700); err != nil {
		return s, err
	}
	s.env = append(os.Environ(), "RMS_ALLOW_INSECURE=1", "RMS_WORKFLOWS__FIRMWARE_DIR="+s.FirmwareDir,
		"RMS_STORAGE__ENCRYPTION_KEY_FILE="+keys,
		// The members poll the simulator at its pace, as --simulate
		// would: a firmware task's polls and a job's waits on a device
		// (after a BMC reset, before the versions are read again) take
		// simulated time, not upstream's real-world intervals.
		"RMS_WORKFLOWS__POLL_SCALE="+strconv.FormatFloat(timeScale, 'g', -1, 64))
	s.env = append(s.env, switchEnv...)
	for i := range o.Members {
		m := &Member{ID: fmt.Sprintf("member-%d", i), index: i, logPath: filepath.Join(o.Dir, fmt.Sprintf("member-%d.log", i))}
		cfg := filepath.Join(o.Dir, m.ID+".toml")
		if err := os.WriteFile(cfg, []byte(memberConfig(o, s.dbURL, m.ID, advertised(i), s.ports[i], s.ports[o.Members+i], memberSeeds(i))), 0o600); err != nil {
			return s, err
		}
		s.Members = append(s.Members, m)
	}
	s.cmdline = []string{o.Binary}
	if o.Command != nil {
		s.cmdline = append([]string(nil), o.Command...)
	}
	s.cmdline = append(s.cmdline, "--config")
	for _, m := range s.Members {
		if err := s.run(m); err != nil {
			return s, err
		}
	}
	if len(s.Nodes.GetNodes()) == 0 {
		return s, nil
	}
	return s, s.register(ctx)
}

// timeScale is the site simulator's time_scale, and its members'
// poll_scale.
const timeScale = 0.01

// siteTiming shortens the compute trays' flash to 4 minutes (2.4 s at
// timeScale): a firmware job then lasts about 4 s, long enough for a test
// to catch it running and kill or drain its member, and a drain waits for
// it seconds, not the 9 s of a 10-minute flash. The other durations are
// the simulator's defaults.
var siteTiming = sim.Timing{ComputeFlash: 4 * time.Minute}

// Build compiles cmd/rmsd into dir, with the race detector if race, and
// returns the binary's path. It runs from any directory of the module.
func Build(ctx context.Context, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "rmsd")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	out, err := exec.CommandContext(ctx, "go", append(args, "github.com/rmsd/rmsd/cmd/rmsd")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build cmd/rmsd: %w: %s", err, out)
	}
	return bin, nil
}

// memberConfig is member id's configuration file.
func memberConfig(o Options, dbURL, id, host string, remotePort, autoPort int, seeds string) string {
	cfg := fmt.Sprintf(`port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
shutdown_grace_seconds = 5
[admin]
enabled = true
port = 0
[metrics]
port = 0
[tls]
insecure = true
[postgres]
db_url = %q
[cluster]
enabled = true
member_id = %q
advertised_address = "%s:%d"
bind_address = "127.0.0.1"
`, dbURL, id, host, remotePort)
	if o.EtcdEndpoint != "" {
		cfg += fmt.Sprintf("provider = \"etcd\"\netcd_endpoints = %q\netcd_prefix = \"/rmsd-site\"\n", o.EtcdEndpoint)
	} else {
		cfg += fmt.Sprintf("automanaged_port = %d\nseeds = %q\n", autoPort, seeds)
	}
	if o.MembershipTimeout != 0 {
		cfg += fmt.Sprintf("membership_timeout_seconds = %d\n", o.MembershipTimeout)
	}
	if o.DrainTimeout != 0 {
		cfg += fmt.Sprintf("[workflows]\ndrain_timeout_seconds = %d\n", o.DrainTimeout)
	}
	return cfg
}

// run starts m's process.
func (s *Site) run(m *Member) error {
	cmdline := append(append([]string(nil), s.cmdline...), filepath.Join(s.o.Dir, m.ID+".toml"))
	env := s.env
	if s.o.MemberEnv != nil {
		env = append(append([]string(nil), s.env...), s.o.MemberEnv(m.ID)...)
	}
	return m.start(cmdline, env, s.o.Wait)
}

// register creates every simulated node through the first member,
// again while racks are still being placed.
func (s *Site) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.Wait)
	defer cancel()
	for {
		resp, err := s.Members[0].RMS().CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: s.Nodes})
		if err == nil && resp.GetStats().GetFailedNodes() == 0 && int(resp.GetStats().GetSuccessfulNodes()) == len(s.Nodes.GetNodes()) {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("register the simulated nodes through %s: %v, %w", s.Members[0].ID, resp.GetResponse(), errors.Join(err, ctx.Err()))
		}
		Pause(ctx, time.Second)
	}
}

// Kill ends member i with SIGKILL.
func (s *Site) Kill(i int) error { return s.Members[i].kill() }

// Stop sends member i SIGTERM and waits for its clean exit: its drain
// window and a margin.
func (s *Site) Stop(i int) error {
	return s.Members[i].stop(time.Duration(s.o.DrainTimeout)*time.Second + s.o.Wait)
}

// Restart starts member i again, on its ports and configuration.
func (s *Site) Restart(i int) error { return s.run(s.Members[i]) }

// NotServing returns the racks no member is serving, from the members' logs:
// empty once every rack has a service open somewhere.
func (s *Site) NotServing() []string {
	serving := map[string]bool{}
	for _, m := range s.Members {
		if !m.Up() {
			continue
		}
		for _, r := range m.Serving() {
			serving[r] = true
		}
	}
	var out []string
	for r := range s.Racks {
		if !serving[r] {
			out = append(out, r)
		}
	}
	return out
}

// Close kills every member still running, stops the simulator and drops
// the database it created.
func (s *Site) Close() {
	for _, m := range s.Members {
		if m.Up() {
			_ = m.kill()
		}
	}
	s.part.close()
	if s.Fleet != nil {
		s.Fleet.Close()
	}
	if s.Store != nil {
		_ = s.Store.Close()
	}
	if s.dropDB {
		if err := dropDatabase(s.o.PostgresURL, s.dbURL); err != nil {
			fmt.Fprintf(os.Stderr, "clustersite: %v\n", err)
		}
	}
}

// nodeInfo is a simulated node as a caller registers it: its BMC and its
// host (a switch's NVOS, a compute tray's host OS), with the credentials
// the devices accept.
func nodeInfo(sn sim.Node) *rmspb.NodeInfo {
	bmc := sn.BMC
	n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
	if sn.Host.Host() != "" {
		host := sn.Host
		n.Host = &host
	}
	return rmsserver.NodeInfoToProto(n)
}

// Pause waits d or until ctx ends: the pace of a retried call.
func Pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

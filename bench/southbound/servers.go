package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/bench/launch"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// daemon is a running rmsd and a gRPC client of it.
type daemon struct {
	*launch.Process
	conn *grpc.ClientConn
	rms  rmspb.RackManagerClient
	// adminConn and admin reach its admin service (the admission scenario
	// cancels its batches between rounds).
	adminConn *grpc.ClientConn
	admin     adminpb.AdminClient
	// ready is how long it took from exec until it served and held every
	// rack's nodes.
	ready time.Duration
	// dir is its directory: configuration, store, firmware_dir.
	dir string
	// metricsAddr is its metrics listener's address (host:port).
	metricsAddr string
}

// daemonConfig is rmsd's configuration: plaintext gRPC on a free loopback
// port, the admin service on another, a store of its own, info logging
// (rmsd's default level), and a
// generous BMC connect and request timeouts: on a loaded machine thousands of first TLS
// handshakes queue for the CPU (the bare client waits as long), and a
// firmware task read every second (the bare client's cadence too); BMC
// operations in flight at once as startDaemon is told.
const daemonConfig = `
port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
shutdown_grace_seconds = 5
[metrics]
port = 0
[admin]
enabled = true
port = 0
[tls]
insecure = true
[redfish]
connect_timeout_seconds = 120
request_timeout_seconds = 300
task_poll_interval_seconds = 1
max_concurrent_requests = %d
[workflows]
firmware_dir = %q
[storage]
sqlite_path = %q
`

// defaultBMCRequests is rmsd's default [redfish] max_concurrent_requests.
const defaultBMCRequests = 256

// startDaemon starts rmsd in a fresh directory under dir, with at most
// bmcRequests BMC operations in flight and env added to its environment
// (configuration overrides, RMS_<SECTION>__<KEY>), and registers racks
// with CreateNodes, one call per rack.
func startDaemon(ctx context.Context, bin, dir string, racks []*rmspb.NodeSet, bmcRequests int, env ...string) (*daemon, error) {
	dir, err := os.MkdirTemp(dir, "rmsd-")
	if err != nil {
		return nil, fmt.Errorf("rmsd directory: %w", err)
	}
	cfg := filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(daemonConfig, bmcRequests, filepath.Join(dir, "firmware"), filepath.Join(dir, "rmsd.db"))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		return nil, fmt.Errorf("write rmsd's configuration: %w", err)
	}
	var addr, adminAddr, metricsAddr string
	ready := func(line string) bool {
		var l struct{ Message, Addr string }
		if json.Unmarshal([]byte(line), &l) != nil {
			return false
		}
		switch {
		case l.Message == "metrics serving":
			metricsAddr = l.Addr
		case strings.HasPrefix(l.Message, "admin service serving"): // logged before rmsd serving
			adminAddr = l.Addr
		case l.Message == "rmsd serving":
			addr = l.Addr
			return true
		}
		return false
	}
	p, err := launch.Start(ctx, launch.Spec{Name: "rmsd", LogPath: filepath.Join(dir, "rmsd.log"),
		Env: append([]string{"RMS_ALLOW_INSECURE=1"}, env...), Ready: ready}, bin, "--config", cfg)
	if err != nil {
		return nil, err
	}
	d := &daemon{Process: p, dir: dir, metricsAddr: metricsAddr}
	if d.conn, err = launch.Dial(ctx, addr, launch.DefaultStartTimeout, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20))); err != nil {
		p.Kill()
		return nil, err
	}
	d.rms = rmspb.NewRackManagerClient(d.conn)
	if d.adminConn, err = launch.Connect(adminAddr); err != nil { // it serves no health service
		d.conn.Close()
		p.Kill()
		return nil, fmt.Errorf("rmsd's admin service: %w", err)
	}
	d.admin = adminpb.NewAdminClient(d.adminConn)
	for _, r := range racks {
		resp, err := d.rms.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: r})
		if err != nil {
			d.close()
			return nil, fmt.Errorf("CreateNodes: %w", err)
		}
		if resp.GetStats().GetFailedNodes() != 0 {
			d.close()
			return nil, fmt.Errorf("CreateNodes: %s", resp.GetResponse().GetMessage())
		}
	}
	d.ready = time.Since(p.Started())
	return d, nil
}

// readPower reads the power state of every node of racks, one
// BatchGetPowerState per rack, all at once, and checks every node answered.
func (d *daemon) readPower(ctx context.Context, racks []*rmspb.NodeSet) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, r := range racks {
		g.Go(func() error {
			resp, err := d.rms.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: r})
			if err != nil {
				return fmt.Errorf("BatchGetPowerState: %w", err)
			}
			if got := len(resp.GetNodePowerStates()); got != len(r.GetNodes()) {
				return fmt.Errorf("BatchGetPowerState: %d of %d nodes answered: %s", got, len(r.GetNodes()), resp.GetResponse().GetMessage())
			}
			return nil
		})
	}
	return g.Wait()
}

func (d *daemon) close() error {
	d.conn.Close()
	d.adminConn.Close()
	return d.Stop()
}

// bare is a running bare client.
type bare struct {
	*launch.Process
	mu sync.Mutex
}

// startBare starts the bare client on a nodes file.
func startBare(ctx context.Context, bin, dir, nodesFile string) (*bare, error) {
	p, err := launch.Start(ctx, launch.Spec{Name: "bareclient", LogPath: filepath.Join(dir, "bareclient.log"), Commands: true,
		Ready: func(l string) bool { return strings.HasPrefix(l, "bareclient ready ") }}, bin, "-nodes", nodesFile)
	if err != nil {
		return nil, err
	}
	return &bare{Process: p}, nil
}

// readPower has the bare client read rack ("*": every node it loaded) and
// checks every node answered.
func (b *bare) readPower(ctx context.Context, rack string, want int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	line, err := b.Command(ctx, "power "+rack)
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "done" {
		return fmt.Errorf("bare client: %s", line)
	}
	ok, _ := strconv.Atoi(f[2])
	if ok != want {
		return fmt.Errorf("bare client: %d of %d nodes answered (%s)", ok, want, line)
	}
	return nil
}

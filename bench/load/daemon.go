package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/bench/launch"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// server is one of the two measured servers, and a client of it.
type server struct {
	*launch.Process
	name string // "rmsd" or "bare", as the report names it
	conn *grpc.ClientConn
	rms  rmspb.RackManagerClient
}

// daemon is the running `rmsd --simulate`, with its admin client.
type daemon struct {
	server
	admin     adminpb.AdminClient
	adminConn *grpc.ClientConn
	dir       string // its working directory: config, store, simulator files
}

// daemonConfig is rmsd's configuration: free ports, a loopback network of
// its own, the admin service on (the harness reads the held-node count),
// room for every job the admissions start, and a 1 s firmware task poll so
// that the preparatory apply ends quickly.
const daemonConfig = `
port = 0
[server]
drain_delay_seconds = 0
shutdown_grace_seconds = 5
[workflows]
firmware_dir = %q
max_tracked_jobs = 1000000
drain_timeout_seconds = 20
[redfish]
task_poll_interval_seconds = 1
[admin]
enabled = true
port = 0
[metrics]
port = 0
[simulator]
network = %d
bmc_port = 0
nvue_port = 0
ssh_port = 0
time_scale = 0.01
nodes_file = %q
[storage]
sqlite_path = %q
`

// startDaemon starts bin as `rmsd --simulate` in dir and waits until its
// gRPC health answers SERVING.
func startDaemon(ctx context.Context, bin, dir string, network int) (*daemon, error) {
	cfg := filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(daemonConfig, filepath.Join(dir, "firmware"), network, filepath.Join(dir, "simulated-nodes.json"), filepath.Join(dir, "rmsd.db"))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		return nil, err
	}
	var rmsAddr, adminAddr string
	ready := func(line string) bool {
		var l struct{ Message, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil {
			switch l.Message {
			case "rmsd serving":
				rmsAddr = l.Addr
			case "admin service serving: it can kill job engine actors":
				adminAddr = l.Addr
			}
		}
		return rmsAddr != "" && adminAddr != ""
	}
	p, err := launch.Start(ctx, launch.Spec{Name: "rmsd", LogPath: filepath.Join(dir, "rmsd.log"), Ready: ready, StartTimeout: startTimeout},
		bin, "--simulate", "--config", cfg)
	if err != nil {
		return nil, err
	}
	d := &daemon{server: server{Process: p, name: "rmsd"}, dir: dir}
	if d.conn, err = launch.Dial(ctx, rmsAddr, startTimeout); err != nil {
		p.Kill()
		return nil, err
	}
	if d.adminConn, err = launch.Connect(adminAddr); err != nil { // the admin service has no health service
		d.conn.Close()
		p.Kill()
		return nil, err
	}
	d.rms = rmspb.NewRackManagerClient(d.conn)
	d.admin = adminpb.NewAdminClient(d.adminConn)
	return d, nil
}

// startBare starts the bare server (bin) on the recording and waits until
// its health answers SERVING.
func startBare(ctx context.Context, bin, recording, logPath string) (*server, error) {
	var addr string
	ready := func(line string) bool {
		if a, ok := strings.CutPrefix(line, "bare serving "); ok {
			addr = a
			return true
		}
		return false
	}
	p, err := launch.Start(ctx, launch.Spec{Name: "bare", LogPath: logPath, Ready: ready, StartTimeout: startTimeout},
		bin, "-recording", recording)
	if err != nil {
		return nil, err
	}
	s := &server{Process: p, name: "bare"}
	if s.conn, err = launch.Dial(ctx, addr, startTimeout); err != nil {
		p.Kill()
		return nil, err
	}
	s.rms = rmspb.NewRackManagerClient(s.conn)
	return s, nil
}

// close closes the client and stops the process.
func (s *server) close() error {
	s.conn.Close()
	return s.Stop()
}

func (d *daemon) close() error {
	d.adminConn.Close()
	return d.server.close()
}

// startTimeout bounds a start, from exec until health answers SERVING.
const startTimeout = 2 * time.Minute

// target is the address ghz dials.
func (s *server) target() string { return s.conn.Target() }

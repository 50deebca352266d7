package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// server is one of the two measured servers, and a client of it.
type server struct {
	*process
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

// build compiles the rmsd module's command pkg (e.g. "./cmd/rmsd") into
// dir with the rmsd module's own dependency versions.
func build(ctx context.Context, root, pkg, dir string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", bin, pkg) // GetVersion names the revision when git can tell it
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s in %s: %w\n%s", pkg, root, err, out.String())
	}
	return bin, nil
}

// startDaemon starts bin as `rmsd --simulate` in dir and waits until its
// gRPC health answers SERVING.
func startDaemon(ctx context.Context, bin, dir string, network int) (*daemon, error) {
	cfg := filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(daemonConfig, filepath.Join(dir, "firmware"), network, filepath.Join(dir, "simulated-nodes.json"), filepath.Join(dir, "rmsd.db"))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		return nil, err
	}
	var rmsAddr, adminAddr string
	ready := func(line []byte) bool {
		var l struct{ Message, Addr string }
		if json.Unmarshal(line, &l) == nil {
			switch l.Message {
			case "rmsd serving":
				rmsAddr = l.Addr
			case "admin service serving: it can kill job engine actors":
				adminAddr = l.Addr
			}
		}
		return rmsAddr != "" && adminAddr != ""
	}
	p, err := startProcess(ctx, "rmsd", filepath.Join(dir, "rmsd.log"), ready, bin, "--simulate", "--config", cfg)
	if err != nil {
		return nil, err
	}
	d := &daemon{server: server{process: p, name: "rmsd"}, dir: dir}
	if d.conn, err = dial(ctx, rmsAddr); err != nil {
		p.kill()
		return nil, err
	}
	if d.adminConn, err = connect(adminAddr); err != nil { // the admin service has no health service
		d.conn.Close()
		p.kill()
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
	ready := func(line []byte) bool {
		if a, ok := strings.CutPrefix(string(line), "bare serving "); ok {
			addr = a
			return true
		}
		return false
	}
	p, err := startProcess(ctx, "bare", logPath, ready, bin, "-recording", recording)
	if err != nil {
		return nil, err
	}
	s := &server{process: p, name: "bare"}
	if s.conn, err = dial(ctx, addr); err != nil {
		p.kill()
		return nil, err
	}
	s.rms = rmspb.NewRackManagerClient(s.conn)
	return s, nil
}

// close closes the client and stops the process.
func (s *server) close() error {
	s.conn.Close()
	return s.stop()
}

func (d *daemon) close() error {
	d.adminConn.Close()
	return d.server.close()
}

// target is the address ghz dials.
func (s *server) target() string { return s.conn.Target() }

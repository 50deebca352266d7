package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/proclog"
)

// daemon is a running `rmsd --simulate` and clients for both its services.
type daemon struct {
	cmd     *exec.Cmd
	exited  chan error
	logPath string
	conns   []*grpc.ClientConn
	rms     rmspb.RackManagerClient
	admin   adminpb.AdminClient
	nodes   *rmspb.NodeSet
	// metricsAddr serves /metrics, where the simulator's overlap count is.
	metricsAddr string
}

// config is the daemon's configuration: free ports, its own loopback
// network, the admin service on, a short drain, a store of its own.
const config = `
port = 0
[server]
drain_delay_seconds = 0
shutdown_grace_seconds = 5
[workflows]
drain_timeout_seconds = 20
[admin]
enabled = true
port = 0
[metrics]
port = 0
[simulator]
racks = %d
network = 88
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
time_scale = 0.01
nodes_file = %q
[storage]
sqlite_path = %q
`

// startDaemon builds (when needed) and starts rmsd, and waits until both
// its services listen.
func startDaemon(ctx context.Context, dir string, o options) (*daemon, error) {
	bin := o.rmsd
	if bin == "" {
		bin = filepath.Join(dir, "rmsd")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/rmsd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build rmsd: %w", err)
		}
	}
	nodesFile := filepath.Join(dir, "nodes.json")
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, config, o.racks, nodesFile, filepath.Join(dir, "rmsd.db")), 0o600); err != nil {
		return nil, err
	}
	d := &daemon{exited: make(chan error, 1), logPath: filepath.Join(dir, "rmsd.log")}
	logFile, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	d.cmd = exec.Command(bin, "--simulate", "--config", cfgPath)
	d.cmd.Stderr = logFile
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start rmsd: %w", err)
	}
	log := proclog.New()
	go func() {
		_ = log.Follow(out, logFile, nil) // ends when rmsd closes its output
		d.exited <- d.cmd.Wait()
		logFile.Close()
	}()
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	a, err := log.Addrs(wait, "rmsd serving", "admin service serving: it can kill job engine actors", "metrics serving")
	switch {
	case errors.Is(err, proclog.ErrEnded):
		return nil, fmt.Errorf("rmsd exited before serving (%v); its log: %s", <-d.exited, d.logPath)
	case err != nil:
		d.kill()
		return nil, fmt.Errorf("rmsd did not start serving (%w); its log: %s", err, d.logPath)
	}
	d.metricsAddr = a[2]
	for i, addr := range a[:2] {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			d.kill()
			return nil, err
		}
		d.conns = append(d.conns, conn)
		if i == 0 {
			d.rms = rmspb.NewRackManagerClient(conn)
		} else {
			d.admin = adminpb.NewAdminClient(conn)
		}
	}
	data, err := os.ReadFile(nodesFile)
	if err != nil {
		d.kill()
		return nil, fmt.Errorf("read the simulated nodes: %w", err)
	}
	d.nodes = &rmspb.NodeSet{}
	if err := protojson.Unmarshal(data, d.nodes); err != nil {
		d.kill()
		return nil, fmt.Errorf("decode the simulated nodes: %w", err)
	}
	return d, nil
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemon) stop() error {
	for _, c := range d.conns {
		c.Close()
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal rmsd: %w", err)
	}
	select {
	case err := <-d.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("rmsd exited with %d; its log: %s", exit.ExitCode(), d.logPath)
		}
		return err
	case <-time.After(time.Minute):
		d.kill()
		return fmt.Errorf("rmsd did not stop within a minute of SIGTERM; its log: %s", d.logPath)
	}
}

func (d *daemon) kill() {
	_ = d.cmd.Process.Kill()
	<-d.exited
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// The end-to-end tests run the real rmsctl binary against one real
// `rmsd --simulate` (a GB200 rack of 35 simulated devices on its own
// loopback network, a free gRPC port, SQLite and firmware_dir in a temp
// dir), both built once here.
var (
	rmsctlBinary string
	daemonAddr   string
	daemonDir    string // holds simulated-nodes.json and simulated-release.json
	// daemonLog is everything the daemon wrote to stdout: its log and the
	// audit log stream.
	daemonLog syncbuf.Buffer
)

// simNetwork is the second octet of the simulated devices' addresses, one
// no other test package uses.
const simNetwork = 113

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rmsctl-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	rmsctlBinary = filepath.Join(dir, "rmsctl")
	rmsd := filepath.Join(dir, "rmsd")
	for bin, pkg := range map[string]string{rmsctlBinary: "github.com/rmsd/rmsd/cmd/rmsctl", rmsd: "github.com/rmsd/rmsd/cmd/rmsd"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n", pkg, err)
			return 1
		}
	}
	daemonDir = filepath.Join(dir, "daemon")
	stop, err := startDaemon(rmsd, daemonDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rmsd --simulate:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// startDaemon runs `rmsd --simulate` in dir and waits (at most a minute)
// for its "rmsd serving" log line, which carries the address; stop sends
// SIGTERM and waits for the exit.
func startDaemon(bin, dir string) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
port = 0
[server]
drain_delay_seconds = 0
[metrics]
port = 0
[storage]
sqlite_path = %q
[workflows]
firmware_dir = %q
[simulator]
network = %d
time_scale = 0.01
bmc_port = 0
nvue_port = 0
ssh_port = 0
nodes_file = %q
`, filepath.Join(dir, "rmsd.db"), filepath.Join(dir, "firmware"), simNetwork, filepath.Join(dir, "simulated-nodes.json"))), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", cfg, "--simulate")
	cmd.Dir = dir
	cmd.Env = environWithout("DATABASE_URL", "RMS_STORAGE__SQLITE_PATH")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addrs := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			_, _ = daemonLog.Write(append(sc.Bytes(), '\n'))
			var line struct{ Message, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "rmsd serving" {
				addrs <- line.Addr
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	}
	select {
	case daemonAddr = <-addrs:
		return stop, nil
	case <-done:
		_ = cmd.Wait()
		return nil, errors.New("rmsd exited before serving")
	case <-time.After(time.Minute):
		stop()
		return nil, errors.New("no 'rmsd serving' within a minute")
	}
}

func environWithout(names ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// result is one rmsctl run.
type result struct {
	stdout, stderr string
	code           int
}

// rmsctl runs the binary against the daemon in the daemon's directory
// (where its nodes and release files are), with a config home of its own
// so no user config is read.
func rmsctl(t *testing.T, args ...string) result {
	t.Helper()
	return rmsctlAt(t, daemonAddr, args...)
}

func rmsctlAt(t *testing.T, addr string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rmsctlBinary, append([]string{"--addr", addr}, args...)...)
	cmd.Dir = daemonDir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("rmsctl %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// ok runs rmsctl and fails the test unless it exits 0.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := rmsctl(t, args...)
	if r.code != 0 {
		t.Fatalf("rmsctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// jsonLines decodes -o json output: one reply per line.
func jsonLines[M proto.Message](t *testing.T, out string, newMsg func() M) []M {
	t.Helper()
	var msgs []M
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := newMsg()
		if err := protojson.Unmarshal([]byte(line), m); err != nil {
			t.Fatalf("-o json line %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// jsonReply decodes -o json output of a single reply.
func jsonReply[M proto.Message](t *testing.T, out string, newMsg func() M) M {
	t.Helper()
	msgs := jsonLines(t, out, newMsg)
	if len(msgs) != 1 {
		t.Fatalf("-o json printed %d lines, want 1: %s", len(msgs), out)
	}
	return msgs[0]
}

// simulatedNodes is the daemon's nodes file.
func simulatedNodes(t *testing.T) *rmspb.NodeSet {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(daemonDir, "simulated-nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var set rmspb.NodeSet
	if err := protojson.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	return &set
}

// writeProtoJSON writes m as protobuf JSON into a temp file.
func writeProtoJSON(t *testing.T, m proto.Message) string {
	t.Helper()
	data, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "file.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

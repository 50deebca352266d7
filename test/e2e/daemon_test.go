package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// rmsdBinary is cmd/rmsd, built once by TestMain.
var rmsdBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rmsd-e2e")
	if err != nil {
		panic(err)
	}
	rmsdBinary = filepath.Join(dir, "rmsd")
	build := exec.Command("go", "build", "-o", rmsdBinary, "github.com/rmsd/rmsd/cmd/rmsd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err == nil {
		code = m.Run()
	} else {
		println("e2e: go build cmd/rmsd failed:", err.Error())
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// daemon is a running rmsd process.
type daemon struct {
	cmd    *exec.Cmd
	addr   string
	opened map[string]any // the "store opened" log line
	lines  chan map[string]any
	done   chan error
}

// startDaemon runs rmsd with env in a working directory of its own (so
// its own SQLite file, rmsd.db there), and waits for its "rmsd serving" log
// line.
func startDaemon(t *testing.T, env []string, args ...string) *daemon {
	t.Helper()
	return startDaemonIn(t, t.TempDir(), env, args...)
}

// startDaemonIn runs rmsd in dir with env and waits for its "rmsd serving"
// log line. The test's own store settings (DATABASE_URL,
// RMS_STORAGE__SQLITE_PATH) are not passed on: the daemon's store is what
// env and its configuration say.
func startDaemonIn(t *testing.T, dir string, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(rmsdBinary, args...)
	cmd.Dir = dir
	cmd.Env = append(environWithout("DATABASE_URL", "RMS_STORAGE__SQLITE_PATH"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, lines: make(chan map[string]any, 1024), done: make(chan error, 1)}
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			var m map[string]any
			if json.Unmarshal(scanner.Bytes(), &m) == nil {
				d.lines <- m
			}
		}
		close(d.lines)
		_, _ = io.Copy(io.Discard, stdout)
		d.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range d.lines {
		}
	})
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-d.lines:
			if !ok {
				t.Fatal("rmsd exited before serving")
			}
			if m["message"] == "store opened" {
				d.opened = m
			}
			if m["message"] == "rmsd serving" {
				d.addr = m["addr"].(string)
				return d
			}
		case <-timeout:
			t.Fatal("rmsd did not log 'rmsd serving' within 20s")
		}
	}
}

// insecureEnv runs the daemon in plaintext on a free loopback port, with
// no drain delay.
var insecureEnv = []string{
	"RMS_ALLOW_INSECURE=1", "RMS_TLS__INSECURE=true", "RMS__PORT=0",
	"RMS_SERVER__BIND_ADDRESS=127.0.0.1", "RMS_METRICS__PORT=0", "RMS_SERVER__DRAIN_DELAY_SECONDS=0",
}

// environWithout is this process's environment less the named variables.
func environWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

func emptyConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stopDaemon sends SIGTERM, waits for exit code 0 and returns the log
// lines that followed "rmsd serving".
func stopDaemon(t *testing.T, d *daemon) (lines []map[string]any) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for m := range d.lines {
		lines = append(lines, m)
	}
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("rmsd exited with %v after SIGTERM, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("rmsd still running 20s after SIGTERM")
	}
	return lines
}

func TestDaemonServesAndExitsZeroOnSIGTERM(t *testing.T) {
	d := startDaemon(t, insecureEnv, "--config", emptyConfig(t))

	conn, err := grpc.NewClient(d.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	version, err := rmspb.NewRackManagerClient(conn).GetVersion(ctx, &rmspb.GetVersionRequest{})
	if err != nil || version.GetVersion() == "" {
		t.Fatalf("GetVersion = %v, %v", version, err)
	}
	health, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "rack_manager.RackManager"})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", health, err)
	}

	lines := stopDaemon(t, d)
	if !slices.ContainsFunc(lines, func(m map[string]any) bool { return m["message"] == "shutdown requested: draining" }) {
		t.Error("no drain log line after SIGTERM")
	}
}

func TestDaemonRefusesPlaintextWithoutTheEnvironmentSwitch(t *testing.T) {
	cmd := exec.Command(rmsdBinary, "--config", emptyConfig(t))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "RMS_TLS__INSECURE=true", "RMS_ALLOW_INSECURE=")
	out, err := cmd.CombinedOutput()
	exitErr, ok := err.(*exec.ExitError)
	if !ok || exitErr.ExitCode() != 1 {
		t.Fatalf("exit = %v, want exit code 1; output %q", err, out)
	}
	msg := strings.TrimSpace(string(out))
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "RMS_ALLOW_INSECURE=1") {
		t.Fatalf("want one clear line naming RMS_ALLOW_INSECURE=1, got %q", msg)
	}
}

// TestDaemonStartsInAKubernetesPod: a Service named "rms" makes Kubernetes
// inject RMS_PORT=tcp://... and friends into the pod, and NICo's admin CLI
// settings share the prefix; none of them may stop rmsd from starting.
func TestDaemonStartsInAKubernetesPod(t *testing.T) {
	env := append([]string{
		"RMS_PORT=tcp://10.0.0.1:8801",
		"RMS_SERVICE_HOST=10.0.0.1",
		"RMS_SERVICE_PORT=8801",
		"RMS_PORT_8801_TCP=tcp://10.0.0.1:8801",
		"RMS_PORT_8801_TCP_PROTO=tcp",
		"RMS_PORT_8801_TCP_PORT=8801",
		"RMS_PORT_8801_TCP_ADDR=10.0.0.1",
		"RMS_API_URL=https://rms.example:8801",
		"RMS_ROOT_CA_PATH=/etc/nico/ca.pem",
	}, insecureEnv...)
	d := startDaemon(t, env, "--config", emptyConfig(t))
	if strings.HasSuffix(d.addr, ":8801") {
		t.Fatalf("serving on %s: a service-link variable was taken as the port", d.addr)
	}
	stopDaemon(t, d)
}

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var stdout, stderr strings.Builder
		cmd := exec.Command(rmsdBinary, arg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("rmsd %s: %v (stderr %q), want exit 0", arg, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "Usage: rmsd") {
			t.Fatalf("rmsd %s printed %q, want the usage", arg, stdout.String())
		}
	}
}

// TestDaemonKeepsItsStoreInTheWorkingDirectory: with no storage settings at
// all, rmsd keeps its state in rmsd.db in its working directory, and a
// second start opens the same file at the same schema version.
func TestDaemonKeepsItsStoreInTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	want := "path=" + filepath.Join(dir, "rmsd.db")
	var versions []any
	for range 2 {
		d := startDaemonIn(t, dir, insecureEnv, "--config", emptyConfig(t))
		stopDaemon(t, d)
		if d.opened["location"] != want || d.opened["engine"] != "sqlite" {
			t.Fatalf("store opened: %v; want sqlite at %s", d.opened, want)
		}
		versions = append(versions, d.opened["schema_version"])
	}
	if versions[0] == nil || versions[0] != versions[1] {
		t.Errorf("schema versions %v: the second start must find the first's schema", versions)
	}
	if _, err := os.Stat(filepath.Join(dir, "rmsd.db")); err != nil {
		t.Error(err)
	}
}

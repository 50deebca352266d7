package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
	"github.com/rmsd/rmsd/test/leakcheck"
	"github.com/rmsd/rmsd/test/syncbuf"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == nvssvtsim.Command {
		// `rmsd --simulate` in these tests runs the test binary as its
		// NVSSVT stand-in, as main does.
		os.Exit(nvssvtsim.Main(context.Background(), os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == asDaemon {
		// A test's second rmsd process (see owner_test.go), or a cluster
		// member (member_test.go): SIGTERM stops it as it stops rmsd.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, runOptions{Args: os.Args[2:], Environ: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr})
		stop()
		os.Exit(code)
	}
	_, err := os.Stat(defaultSQLitePath)
	existed := err == nil
	code := m.Run()
	removeSiteBinary()
	if code == 0 {
		if err := goleak.Find(leakcheck.ProtoactorThrottle); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on a successful test run: %v\n", err)
			code = 1
		}
	}
	if _, err := os.Stat(defaultSQLitePath); err == nil && !existed {
		fmt.Fprintf(os.Stderr, "a test left %s in cmd/rmsd: give every daemon a test starts its own [storage] sqlite_path (withStorage)\n", defaultSQLitePath)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(defaultSQLitePath + suffix)
		}
		code = 1
	}
	os.Exit(code)
}

// defaultSQLitePath is where a daemon started without [storage]
// sqlite_path would put its database: the working directory.
const defaultSQLitePath = "rmsd.db"

// withStorage gives a daemon a SQLite file and a firmware directory of its
// own in temporary directories, and a free metrics port, unless environ
// already names them.
func withStorage(t *testing.T, environ []string) []string {
	t.Helper()
	out := slices.Clone(environ)
	if !slices.ContainsFunc(environ, func(kv string) bool {
		return strings.HasPrefix(kv, "RMS_STORAGE__SQLITE_PATH=") || strings.HasPrefix(kv, "DATABASE_URL=")
	}) {
		out = append(out, "RMS_STORAGE__SQLITE_PATH="+filepath.Join(t.TempDir(), "rmsd.db"))
	}
	if !slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, "RMS_WORKFLOWS__FIRMWARE_DIR=") }) {
		out = append(out, "RMS_WORKFLOWS__FIRMWARE_DIR="+t.TempDir())
	}
	if !slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, "RMS_METRICS__PORT=") }) {
		out = append(out, "RMS_METRICS__PORT=0")
	}
	return out
}

// lockedBuffer collects a writer's output safely across goroutines.
type lockedBuffer = syncbuf.Buffer

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const insecureLoopback = `
port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
[metrics]
port = 0
[tls]
insecure = true
`

// runningDaemon is run() serving in the background of a test.
type runningDaemon struct {
	addr           net.Addr
	stdout, stderr *lockedBuffer
	exit           chan int
	stop           context.CancelFunc
	conn           *grpc.ClientConn
}

// startRun runs the daemon with args and environ until the test stops it
// (stop, then read exit) or ends, and connects a client to it.
func startRun(t *testing.T, environ []string, args ...string) *runningDaemon {
	t.Helper()
	return startRunWith(t, runOptions{Args: args, Environ: environ})
}

// startRunWith is startRun with more of the daemon's inputs; it sets the
// outputs and Ready itself.
func startRunWith(t *testing.T, opts runOptions) *runningDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := &runningDaemon{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exit: make(chan int, 1), stop: cancel}
	ready := make(chan net.Addr, 1)
	opts.Stdout, opts.Stderr = d.stdout, d.stderr
	opts.Ready = func(a net.Addr) { ready <- a }
	opts.Environ = withStorage(t, opts.Environ)
	go func() { d.exit <- run(ctx, opts) }()
	select {
	case d.addr = <-ready:
	case code := <-d.exit:
		t.Fatalf("run exited %d before serving: %s", code, d.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("daemon not ready within 30s")
	}
	conn, err := grpc.NewClient(d.addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	d.conn = conn
	return d
}

// logLine returns the first JSON log line with the given message.
func logLine(t *testing.T, out, message string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["message"] == message {
			return m
		}
	}
	t.Fatalf("no %q line in the log:\n%s", message, out)
	return nil
}

// stopRun stops a daemon and wants exit code 0.
func stopRun(t *testing.T, d *runningDaemon) {
	t.Helper()
	d.stop()
	if code := <-d.exit; code != 0 {
		t.Fatalf("exit code %d: %s", code, d.stderr.String())
	}
}

func TestRunServesGetVersionAndShutsDownWithExitZero(t *testing.T) {
	d := startRun(t, []string{"RMS_ALLOW_INSECURE=1"}, "--config", writeFile(t, insecureLoopback))
	stdout, stderr, exit, cancel, conn := d.stdout, d.stderr, d.exit, d.stop, d.conn
	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rpcCancel()
	resp, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcCtx, &rmspb.GetVersionRequest{})
	if err != nil || resp.GetVersion() == "" {
		t.Fatalf("GetVersion = %v, %v", resp, err)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit code %d after shutdown, stderr: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not stop within 10s of shutdown")
	}
	for _, want := range []string{`"message":"rmsd serving"`, `"message":"shutdown requested: draining"`, `"message":"rmsd stopped"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, stdout.String())
		}
	}
}

func TestRunRefusesToStart(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		environ []string
		want    string
	}{
		{"insecure without RMS_ALLOW_INSECURE", insecureLoopback, nil, "RMS_ALLOW_INSECURE=1"},
		{"RMS_ALLOW_INSECURE without tls.insecure", "port = 0\n", []string{"RMS_ALLOW_INSECURE=1"}, "refusing to start gRPC server without mTLS"},
		{"neither mTLS nor insecure", "port = 0\n", nil, "refusing to start gRPC server without mTLS"},
		{"invalid configuration", "port = \"x\"\nbogus = 1\n", nil, `unknown key "bogus"`},
		{"TOML syntax error", "port = 0\n[tls\n", nil, "(1 problem): "},
		{"authz on plaintext", insecureLoopback + "[authz.roles.ro]\npermissions = [\"read\"]\n", []string{"RMS_ALLOW_INSECURE=1"},
			"[authz] defines roles, but the gRPC listener is not mTLS"},
		{"invalid authz", insecureLoopback + "[authz.roles.ro]\npermissions = [\"reboot\"]\n[[authz.bindings]]\nroles = [\"rw\"]\ncn = \"x\"\n",
			[]string{"RMS_ALLOW_INSECURE=1"}, `authz.bindings[0].roles: unknown role "rw"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := run(context.Background(), runOptions{
				Args:    []string{"--config", writeFile(t, tt.config)},
				Environ: withStorage(t, tt.environ),
				Stdout:  &stdout,
				Stderr:  &stderr,
				Ready:   func(net.Addr) { t.Error("daemon must not serve") },
			})
			if code != 1 {
				t.Fatalf("exit code = %d, want 1", code)
			}
			msg := stderr.String()
			if !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
				t.Fatalf("stderr = %q, want one line containing %q", msg, tt.want)
			}
		})
	}
}

func TestExplicitMissingConfigFileFails(t *testing.T) {
	var stderr lockedBuffer
	code := run(context.Background(), runOptions{
		Args:   []string{"--config", filepath.Join(t.TempDir(), "absent.toml")},
		Stdout: &lockedBuffer{}, Stderr: &stderr,
	})
	if code != 1 || !strings.Contains(stderr.String(), "configuration file not found") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
}

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help"} {
		t.Run(arg, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := run(context.Background(), runOptions{
				Args: []string{arg}, Stdout: &stdout, Stderr: &stderr,
				Ready: func(net.Addr) { t.Error("--help must not serve") },
			})
			if code != 0 {
				t.Fatalf("exit code = %d, want 0; stderr %q", code, stderr.String())
			}
			out := stdout.String()
			for _, want := range []string{"Usage: rmsd", "-config", "-simulate"} {
				if !strings.Contains(out, want) {
					t.Errorf("usage on stdout lacks %q:\n%s", want, out)
				}
			}
			if stderr.String() != "" {
				t.Errorf("stderr = %q, want nothing", stderr.String())
			}
		})
	}
}

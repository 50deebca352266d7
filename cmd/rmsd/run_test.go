package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// protoactor's dead-letter throttle resets itself on a short-lived
		// goroutine that ends one throttle interval after the last dead letter.
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}

// lockedBuffer collects a writer's output safely across goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

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
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := &runningDaemon{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exit: make(chan int, 1), stop: cancel}
	ready := make(chan net.Addr, 1)
	go func() {
		d.exit <- run(ctx, runOptions{Args: args, Environ: environ, Stdout: d.stdout, Stderr: d.stderr,
			Ready: func(a net.Addr) { ready <- a }})
	}()
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := run(context.Background(), runOptions{
				Args:    []string{"--config", writeFile(t, tt.config)},
				Environ: tt.environ,
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

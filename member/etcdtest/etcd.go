// Package etcdtest starts a private etcd server for the tests of cluster
// mode's etcd provider: Debian's etcd-server binary, on free loopback
// ports, with its data in the test's temporary directory, stopped when
// the test ends. It holds no test of its own and is never linked into
// rmsd.
package etcdtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// EnvRequireEtcd set to 1 turns "no etcd binary" from a skip into a
// failure. .ci/run sets it after .ci/install-etcd.sh.
const EnvRequireEtcd = "RMSD_TEST_REQUIRE_ETCD"

// readyWait bounds the wait for a started etcd to answer; generous for a
// loaded machine.
const readyWait = 60 * time.Second

// Start runs a one-member etcd for t and returns its client URL. Without
// an etcd binary on the PATH the test is skipped with a notice, unless
// RMSD_TEST_REQUIRE_ETCD=1 makes that a failure.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		msg := "SKIPPING etcd tests: no etcd binary on the PATH (.ci/install-etcd.sh installs Debian's etcd-server); " + EnvRequireEtcd + "=1 makes this a failure"
		if os.Getenv(EnvRequireEtcd) == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	ports := freeLoopbackPorts(t, 2)
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	dir := t.TempDir()
	cmd := exec.Command(bin,
		"--name", "test",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "test="+peer,
		"--initial-cluster-state", "new",
	)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("etcd output:\n%s", out.String())
		}
	})
	// Ready when its client port accepts and it has elected itself
	// leader (a one-member cluster does so at once).
	deadline := time.Now().Add(readyWait)
	poll := time.NewTicker(50 * time.Millisecond) // a bounded poll for the server's readiness
	defer poll.Stop()
	for !bytes.Contains(out.Bytes(), []byte("ready to serve client requests")) {
		select {
		case err := <-exited:
			t.Fatalf("etcd exited before it served: %v\n%s", err, out.String())
		case <-poll.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not serve within %s:\n%s", readyWait, out.String())
		}
	}
	return client
}

// freeLoopbackPorts returns n distinct ports free on 127.0.0.1 at the time
// of the call.
func freeLoopbackPorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// lockedBuffer is etcd's output, written by exec's copier and read by the
// test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes returns a copy of what was written so far.
func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *lockedBuffer) String() string { return string(b.Bytes()) }

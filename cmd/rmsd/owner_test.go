package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/storetest"
)

// asDaemon, as the test binary's first argument, makes it run as rmsd with
// the rest of the arguments (TestMain): a second process for the tests of
// one writer per store.
const asDaemon = "rmsd-as-daemon"

// TestRunRefusesAStoreAnotherProcessHolds starts a daemon on a SQLite file,
// then a second rmsd process on the same file: it exits 1 naming the first
// (host, this test's pid, since), the first keeps serving, and once the
// first has stopped a new daemon starts on the file.
func TestRunRefusesAStoreAnotherProcessHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	environ := withStorage(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_STORAGE__SQLITE_PATH=" + path})
	cfg := writeFile(t, insecureLoopback)
	first := startRun(t, environ, "--config", cfg)

	// A refusal takes a second or so; a second daemon that serves instead
	// is killed at the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	second := exec.CommandContext(ctx, os.Args[0], asDaemon, "--config", cfg)
	second.Env = append(os.Environ(), environ...)
	var stdout, stderr bytes.Buffer
	second.Stdout, second.Stderr = &stdout, &stderr
	err := second.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second rmsd on the same file: %v (a second daemon served, or was killed at the deadline); stderr:\n%s", err, stderr.String())
	}
	host, _ := os.Hostname()
	want := "store path=" + path + " is held by rmsd on host " + host + " pid " + strconv.Itoa(os.Getpid()) + " since "
	if msg := stderr.String(); !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 {
		t.Errorf("second rmsd's stderr %q, want one line with %q", msg, want)
	}
	if strings.Contains(stdout.String(), `"message":"rmsd serving"`) {
		t.Errorf("the second rmsd served:\n%s", stdout.String())
	}

	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rpcCancel()
	if _, err := rmspb.NewRackManagerClient(first.conn).GetVersion(rpcCtx, &rmspb.GetVersionRequest{}); err != nil {
		t.Errorf("the first daemon stopped serving after the refusal: %v", err)
	}
	was := logLine(t, first.stdout.String(), "store opened")["epoch"]
	stopRun(t, first)

	next := startRun(t, environ, "--config", cfg)
	stopRun(t, next)
	if now := logLine(t, next.stdout.String(), "store opened")["epoch"]; now.(float64) <= was.(float64) {
		t.Errorf("epoch %v after the handover, want above %v", now, was)
	}
}

// TestRunRefusesAPostgreSQLStoreAnotherDaemonHolds: the same refusal on
// PostgreSQL, without the URL's password.
func TestRunRefusesAPostgreSQLStoreAnotherDaemonHolds(t *testing.T) {
	const secret = "hunter2"
	dbURL := storetest.TempPostgresDatabase(t)
	withPassword := strings.Replace(dbURL, "postgres://postgres@", "postgres://postgres:"+secret+"@", 1)
	environ := []string{"RMS_ALLOW_INSECURE=1", "DATABASE_URL=" + withPassword}
	cfg := writeFile(t, insecureLoopback)
	first := startRun(t, environ, "--config", cfg)
	defer stopRun(t, first)

	var stdout, stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := run(ctx, runOptions{
		Args: []string{"--config", cfg}, Environ: withStorage(t, environ), Stdout: &stdout, Stderr: &stderr,
		Ready: func(_ net.Addr) {
			t.Error("a second daemon served on a held PostgreSQL database")
			cancel()
		},
	})
	msg := stderr.String()
	if code != 1 || !strings.Contains(msg, "open the store named by DATABASE_URL: store host=") ||
		!strings.Contains(msg, "is held by rmsd on host ") || !strings.Contains(msg, " pid "+strconv.Itoa(os.Getpid())+" since ") {
		t.Errorf("second daemon: exit %d, stderr %q; want 1 and a refusal naming the first", code, msg)
	}
	if strings.Contains(msg+stdout.String(), secret) {
		t.Errorf("the password is in the output: %s%s", msg, stdout.String())
	}
}

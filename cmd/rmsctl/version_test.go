package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestVersionFlagOfAStampedBuild: a release build stamps its version with
// -ldflags -X; `rmsctl --version` prints it with the Go toolchain and
// exits 0 without dialling (nothing listens on the address).
func TestVersionFlagOfAStampedBuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "rmsctl")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"-ldflags", "-X github.com/rmsd/rmsd/cmd/internal/buildinfo.stamped=v7.7.7-test",
		"github.com/rmsd/rmsd/cmd/rmsctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:1", "--timeout", "1s", "--version")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rmsctl --version: %v (%s)", err, out)
	}
	for _, want := range []string{"rmsctl v7.7.7-test\n", "commit: ", "go:     " + runtime.Version() + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version printed %q, lacks %q", out, want)
		}
	}
}

package main

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
)

// TestVersionPrintsTheBuildAndExitsZero: --version names the version, the
// commit and the Go toolchain on stdout, and serves nothing.
func TestVersionPrintsTheBuildAndExitsZero(t *testing.T) {
	var stdout, stderr lockedBuffer
	code := run(context.Background(), runOptions{
		Args: []string{"--version"}, Stdout: &stdout, Stderr: &stderr,
		Ready: func(net.Addr) { t.Error("--version must not serve") },
	})
	if code != 0 {
		t.Fatalf("exit code = %d, want 0; stderr %q", code, stderr.String())
	}
	out := stdout.String()
	b := buildinfo.Read()
	for _, want := range []string{"rmsd " + b.Version + "\n", "commit: " + b.Revision + "\n", "go:     " + runtime.Version() + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--version printed %q, lacks %q", out, want)
		}
	}
	if stderr.String() != "" {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
}

// TestStrayArgumentsAreRefused: rmsd takes no operands; one (a subcommand
// it does not have, a flag value without its flag) is a usage error naming
// the argument, exit code 2, before anything starts. So is an unknown flag.
func TestStrayArgumentsAreRefused(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"subcommand":          {[]string{"serve"}, `unexpected argument "serve"`},
		"after the flags":     {[]string{"--simulate", "/etc/rms/config.toml"}, `unexpected argument "/etc/rms/config.toml"`},
		"after --config PATH": {[]string{"--config", "a.toml", "b.toml"}, `unexpected argument "b.toml"`},
		"unknown flag":        {[]string{"--bogus"}, "flag provided but not defined: -bogus"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := run(context.Background(), runOptions{
				Args: tt.args, Stdout: &stdout, Stderr: &stderr,
				Ready: func(net.Addr) { t.Error("a usage error must not serve") },
			})
			if code != 2 {
				t.Fatalf("exit code = %d, want 2; stderr %q", code, stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "Usage: rmsd") {
				t.Errorf("stderr = %q, want %q and the usage", msg, tt.want)
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

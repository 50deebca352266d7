package ctl

import (
	"runtime"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
)

// TestVersionFlagPrintsTheBuildWithoutDialling: rmsctl --version names its
// version, commit and Go toolchain and exits 0, with no rmsd to answer
// (the address is one nothing listens on).
func TestVersionFlagPrintsTheBuildWithoutDialling(t *testing.T) {
	code, out, errOut := runCtl(t, "--addr", "127.0.0.1:1", "--timeout", "1s", "--version")
	if code != ExitOK {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	b := buildinfo.Read()
	for _, want := range []string{"rmsctl " + b.Version + "\n", "commit: " + b.Revision + "\n", "go:     " + runtime.Version() + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--version printed %q, lacks %q", out, want)
		}
	}
	if errOut != "" {
		t.Errorf("stderr = %q, want nothing", errOut)
	}
}

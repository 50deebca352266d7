package ctl

import (
	"os"
	"strings"
	"testing"
)

// TestRmsctlGuideCommandLinesParse: every rmsctl command line of
// docs/cli.md names a command that exists, with flags and arguments it
// takes, and the guide shows each command it documents.
func TestRmsctlGuideCommandLinesParse(t *testing.T) {
	data, err := os.ReadFile("../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	inShell := false
	pending := ""
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			inShell = true
			continue
		case strings.HasPrefix(l, "```"):
			inShell = false
			continue
		case !inShell:
			continue
		}
		if cont, ok := strings.CutSuffix(l, "\\"); ok {
			pending += cont
			continue
		}
		lines = append(lines, pending+l)
		pending = ""
	}
	seen := map[string]bool{}
	for _, l := range lines {
		i := strings.Index(l, "rmsctl ")
		if i < 0 || (i > 0 && !strings.HasSuffix(strings.TrimSpace(l[:i]), "|")) {
			continue // not an rmsctl command (go build, umask, ...)
		}
		line := l[i:]
		if err := CheckCommandLine(line); err != nil {
			t.Errorf("docs/cli.md: %s: %v", line, err)
		}
		for _, c := range []string{"cold-reboot", "switch password", "fabric configure", "fabric status"} {
			if strings.Contains(line, " "+c+" ") {
				seen[c] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("docs/cli.md shows only %v of the four commands", seen)
	}
}

package ctl

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command tree the docs are written against (issue 13): every line
// must parse, so a renamed command or flag fails here first.
var documentedTree = []string{
	`rmsctl version`,
	`rmsctl racks list`,
	`rmsctl nodes list`,
	`rmsctl nodes list --rack rack-001`,
	`rmsctl nodes create -f simulated-nodes.json`,
	`rmsctl nodes update -f node.json`,
	`rmsctl nodes delete --rack rack-001 rack-001-compute-01`,
	`rmsctl power get --rack rack-001 rack-001-compute-01 rack-001-compute-02`,
	`rmsctl power get -f simulated-nodes.json`,
	`rmsctl power set --rack rack-001 --state on rack-001-compute-01`,
	`rmsctl power set --rack rack-001 --state force-off rack-001-compute-01`,
	`rmsctl power set --rack rack-001 --state graceful-shutdown rack-001-compute-01`,
	`rmsctl power set --rack rack-001 --state power-cycle rack-001-compute-01`,
	`rmsctl power set -f simulated-nodes.json --state off`,
	`rmsctl device-info get --rack rack-001 rack-001-compute-01`,
	`rmsctl device-info list --rack rack-001 --type COMPUTE_GB200_NVIDIA`,
	`rmsctl firmware inventory --rack rack-001`,
	`rmsctl firmware inventory --rack rack-001 rack-001-compute-01`,
	`rmsctl firmware objects add -f simulated-release.json --default`,
	`rmsctl firmware objects list`,
	`rmsctl firmware objects get DGXGB200_1.3.7`,
	`rmsctl firmware objects delete DGXGB200_1.3.7`,
	`rmsctl firmware objects set-default DGXGB200_1.3.7`,
	`rmsctl firmware objects history`,
	`rmsctl firmware objects history DGXGB200_1.3.7`,
	`rmsctl firmware apply --object DGXGB200_1.3.7 --rack rack-001 --watch`,
	`rmsctl firmware apply --rack rack-001 rack-001-compute-01 rack-001-compute-02`,
	`rmsctl firmware compare -f simulated-release.json --rack rack-001 rack-001-compute-01`,
	`rmsctl switch images list --rack rack-001 rack-001-switch-01`,
	`rmsctl switch images apply --rack rack-001 --image nvos-amd64-25.02.2553.bin rack-001-switch-01 --watch`,
	`rmsctl jobs get 3f1c`,
	`rmsctl jobs children 3f1c`,
	`rmsctl jobs watch 3f1c`,
	`rmsctl jobs cancel 3f1c`,
	`rmsctl jobs cancel --admin-addr 127.0.0.1:8803 3f1c`,
	`rmsctl --addr rms.example:8801 --tls --ca ca.pem --cert client.pem --key client.key --server-name rms.example -o json --timeout 10s racks list`,
	`rmsctl --config ./rmsctl.toml jobs watch <job-id>   # a comment`,
	`rmsctl -o json jobs get "$(cat job-id)" | jq .`,
	`rmsctl nodes create -f simulated-nodes.json > out.txt`,
	`rmsctl jobs --help`,
}

func TestTheDocumentedCommandTreeParses(t *testing.T) {
	for _, line := range documentedTree {
		if err := CheckCommandLine(line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

func TestMistypedCommandLinesDoNotParse(t *testing.T) {
	for _, line := range []string{
		`rmsctl rack list`,                        // no such command
		`rmsctl racks list --rack r1`,             // no such flag
		`rmsctl nodes delete rack-001-compute-01`, // --rack is required
		`rmsctl power get rack-001-compute-01`,    // --rack or -f is required
		`rmsctl power get --rack r -f n.json x`,   // not both
		`rmsctl jobs watch`,                       // JOB_ID is required
		`rmsctl jobs get a b`,                     // one JOB_ID
		`rmsctl firmware objects`,                 // a group, not a command
		`rmsctl --timeout soon version`,           // not a duration
		`rmsctl firmware compare --rack r x`,      // -f is required
		`rmsctl jobs watch "unterminated`,
	} {
		if err := CheckCommandLine(line); err == nil {
			t.Errorf("%s: parsed, want an error", line)
		}
	}
}

// TestDocumentedExamplesParse checks every `rmsctl ...` line in fenced code
// blocks of README.md and docs/*.md against the command tree.
func TestDocumentedExamplesParse(t *testing.T) {
	root := moduleRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	checked := 0
	for _, f := range files {
		for _, ex := range commandExamples(t, f) {
			checked++
			if err := CheckCommandLine(ex.line); err != nil {
				t.Errorf("%s:%d: %s\n\t%v", filepath.Base(f), ex.lineNo, ex.line, err)
			}
		}
	}
	if checked == 0 {
		t.Error("no rmsctl example found in README.md or docs/*.md")
	}
	t.Logf("%d rmsctl examples checked", checked)
}

type example struct {
	lineNo int
	line   string
}

// commandExamples are the rmsctl command lines inside fenced code blocks
// of a Markdown file, continuation lines joined, a leading "$ " prompt or
// `go run ./cmd/rmsctl` read as rmsctl.
func commandExamples(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	inFence, n := false, 0
	var pending strings.Builder
	start := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(raw), "```") {
			inFence = !inFence
			pending.Reset()
			continue
		}
		if !inFence {
			continue
		}
		if pending.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(raw, `\`) {
			pending.WriteString(strings.TrimSuffix(raw, `\`) + " ")
			continue
		}
		pending.WriteString(raw)
		line := strings.TrimSpace(pending.String())
		pending.Reset()
		line = strings.TrimPrefix(line, "$ ")
		if rest, ok := strings.CutPrefix(line, "go run ./cmd/rmsctl "); ok {
			line = "rmsctl " + rest
		}
		if strings.HasPrefix(line, "rmsctl ") {
			out = append(out, example{start, line})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// A malformed nodes file is refused without quoting its content, which may
// hold a password.
func TestAMalformedNodesFileIsNotQuoted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.json")
	if err := os.WriteFile(path, []byte(`{"nodes":[{"node_id":"n1","bmc_endpoint":{"credentials":{"user_pass":{"password": hunter2-secret}}}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCtl(t, "--addr", "127.0.0.1:1", "power", "get", "-f", path)
	if code != ExitUsage || !strings.Contains(errOut, "NodeSet") {
		t.Errorf("a malformed nodes file: exit %d, %q; want a usage error naming the NodeSet", code, errOut)
	}
	if strings.Contains(errOut, "hunter2") {
		t.Errorf("the error quotes the file's content: %q", errOut)
	}
}

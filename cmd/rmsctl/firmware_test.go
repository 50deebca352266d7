package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestFirmwareCatalogApplyAndWatch is the firmware flow an operator runs
// with rmsctl on `rmsd --simulate`, in order: add the simulated release
// and wait for it, list and show it, compare, apply it to a compute tray
// and a power shelf following the job as JSON lines, compare again, read the
// history and the jobs, watch applies under a terminal (one that
// completes, one that fails), and finally delete the object.
func TestFirmwareCatalogApplyAndWatch(t *testing.T) {
	release := filepath.Join(daemonDir, "simulated-release.json")
	var id string

	t.Run("add --wait", func(t *testing.T) {
		added := jsonReply(t, ok(t, "-o", "json", "firmware", "objects", "add", "-f", release, "--wait"),
			func() *rmspb.AddFirmwareObjectResponse { return &rmspb.AddFirmwareObjectResponse{} })
		id = added.GetObject().GetId()
		if id == "" || !added.GetObject().GetAvailable() {
			t.Fatalf("objects add --wait: %v", added.GetObject())
		}
		again := rmsctl(t, "firmware", "objects", "add", "-f", release)
		if again.code != 5 || !strings.Contains(again.stderr, "already exists") {
			t.Errorf("adding it twice: exit %d, %q; want 5 and already exists", again.code, again.stderr)
		}
	})
	if id == "" {
		t.FailNow()
	}

	t.Run("list and get", func(t *testing.T) {
		if out := ok(t, "firmware", "objects", "list"); !strings.Contains(out, id) || !strings.Contains(out, "gb200-nvl") {
			t.Errorf("objects list:\n%s", out)
		}
		list := jsonReply(t, ok(t, "-o", "json", "firmware", "objects", "list", "--available"),
			func() *rmspb.ListFirmwareObjectsResponse { return &rmspb.ListFirmwareObjectsResponse{} })
		if len(list.GetObjects()) != 1 || list.GetObjects()[0].GetId() != id {
			t.Errorf("-o json objects list --available: %v", list)
		}
		if out := ok(t, "firmware", "objects", "get", id); !strings.Contains(out, "PowerShelfFW") || !strings.Contains(out, "POWERSHELF_GB200_LITEON") {
			t.Errorf("objects get:\n%s", out)
		}
	})

	// A compute tray (its BMC and HMC) and a power shelf.
	nodes := []string{"rack-001-compute-05", "rack-001-powershelf-01"}
	t.Run("compare before", func(t *testing.T) {
		r := rmsctl(t, append([]string{"-o", "json", "firmware", "compare", "-f", release, "--rack", rack}, nodes...)...)
		cmp := jsonReply(t, r.stdout, func() *rmspb.CompareFirmwareObjectResponse { return &rmspb.CompareFirmwareObjectResponse{} })
		if r.code != 1 || cmp.GetMatchesManifest() || len(cmp.GetNodes()) != 2 || !strings.Contains(r.stderr, "differs") {
			t.Errorf("compare before the apply: exit %d, matches %v, %q; want 1 and a difference", r.code, cmp.GetMatchesManifest(), r.stderr)
		}
	})

	var parent string
	t.Run("apply --watch -o json", func(t *testing.T) {
		out := ok(t, append([]string{"-o", "json", "firmware", "apply", "--object", id, "--rack", rack, "--watch", "--interval", "100ms"}, nodes...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var applied rmspb.ApplyStoredFirmwareObjectResponse
		if err := protojson.Unmarshal([]byte(lines[0]), &applied); err != nil || len(applied.GetJobs()) != 2 {
			t.Fatalf("first line is the apply's reply: %v %s", err, lines[0])
		}
		parent = applied.GetResponse().GetJobId()
		polls := jsonLines(t, strings.Join(lines[1:], "\n"), func() *rmspb.GetJobStatusResponse { return &rmspb.GetJobStatusResponse{} })
		last := polls[len(polls)-1].GetJobStates()
		if last[0].GetJobId() != parent || last[0].GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || len(last) != 3 {
			t.Errorf("the last watch line: %v", last)
		}
	})

	t.Run("compare after", func(t *testing.T) {
		out := ok(t, "firmware", "compare", "-f", release, "--rack", rack, "--components", "COMPUTE_GB200_NVIDIA=BMC,HMC", nodes[0])
		if strings.Count(out, "MATCHED") != 2 || !strings.Contains(out, "1 match, 0 differ") {
			t.Errorf("compare after the apply:\n%s", out)
		}
	})

	t.Run("history and jobs", func(t *testing.T) {
		hist := jsonReply(t, ok(t, "-o", "json", "firmware", "objects", "history", id),
			func() *rmspb.GetFirmwareObjectHistoryResponse { return &rmspb.GetFirmwareObjectHistoryResponse{} })
		if len(hist.GetRecords()) == 0 || len(hist.GetRecords()[0].GetNodeIds()) != 2 {
			t.Errorf("history: %v", hist)
		}
		if out := ok(t, "firmware", "objects", "history"); !strings.Contains(out, id) || !strings.Contains(out, rack) {
			t.Errorf("history:\n%s", out)
		}
		if out := ok(t, "jobs", "get", parent); !strings.Contains(out, "Completed") || !strings.Contains(out, parent) {
			t.Errorf("jobs get:\n%s", out)
		}
		children := ok(t, "jobs", "children", parent)
		if strings.Count(children, "Completed") != 2 || !strings.Contains(children, nodes[0]) || !strings.Contains(children, nodes[1]) {
			t.Errorf("jobs children:\n%s", children)
		}
		all := jsonReply(t, ok(t, "-o", "json", "jobs", "children", parent), func() *rmspb.GetJobStatusResponse { return &rmspb.GetJobStatusResponse{} })
		if len(all.GetJobStates()) != 3 {
			t.Errorf("-o json jobs children: %d states, want the parent and 2 children", len(all.GetJobStates()))
		}
		// Watching a job that has ended prints its last state and exits 0.
		if out := ok(t, "jobs", "watch", parent); !strings.Contains(out, "Completed") {
			t.Errorf("jobs watch of a completed job:\n%s", out)
		}
	})

	t.Run("watch under a terminal: completed", func(t *testing.T) {
		job := startApply(t, id, simulatedNodesFile(t), "rack-001-powershelf-03", "rack-001-powershelf-04")
		out, code := watchInTerminal(t, job)
		if code != 0 {
			t.Errorf("jobs watch of a completing job exited %d, want 0:\n%s", code, out)
		}
		assertDrawsBars(t, out, "rack-001-powershelf-03", "rack-001-powershelf-04")
		if !strings.Contains(out, "Completed: Firmware update completed") || !strings.Contains(out, "job "+job+" Completed") {
			t.Errorf("no completed children or parent in the terminal view:\n%q", out)
		}
	})

	t.Run("watch under a terminal: failed", func(t *testing.T) {
		// A shelf whose BMC nothing answers fails in its job.
		nodes := simulatedNodes(t)
		for _, n := range nodes.GetNodes() {
			if n.GetNodeId() == "rack-001-powershelf-05" {
				n.BmcEndpoint.Interface.IpAddress = "127.0.0.1"
				n.BmcEndpoint.Port = 1
			}
		}
		job := startApply(t, id, writeProtoJSON(t, nodes), "rack-001-powershelf-05", "rack-001-powershelf-06")
		out, code := watchInTerminal(t, job)
		if code != 1 {
			t.Errorf("jobs watch of a failing job exited %d, want 1:\n%s", code, out)
		}
		assertDrawsBars(t, out, "rack-001-powershelf-05", "rack-001-powershelf-06")
		if !strings.Contains(out, "Failed: JOB_ERROR_CLIENT_ERROR") || !strings.Contains(out, "job "+job+" failed") {
			t.Errorf("the terminal view does not show the failure:\n%q", out)
		}
	})

	t.Run("watch under a terminal: interrupted", func(t *testing.T) {
		// A compute tray's flash and activation outlast the watch: once its
		// bar is drawn, SIGINT stops the watch (not the job).
		job := startApply(t, id, simulatedNodesFile(t), "rack-001-compute-06")
		out, code := watchInTerminalUntil(t, job, "rack-001/rack-001-compute-06")
		if code != 130 || !strings.Contains(out, "interrupted") {
			t.Errorf("an interrupted watch: exit %d, want 130 and a word about it:\n%q", code, out)
		}
		if out := ok(t, "jobs", "get", job); strings.Contains(out, "Failed") {
			t.Errorf("interrupting the watch must leave the job alone:\n%s", out)
		}
	})

	t.Run("set-default and delete", func(t *testing.T) {
		if out := ok(t, "firmware", "objects", "set-default", id); !strings.Contains(out, id) || !strings.Contains(out, "yes  ") {
			t.Errorf("objects set-default:\n%s", out)
		}
		if out := ok(t, "firmware", "objects", "delete", id); !strings.Contains(out, "deleted") {
			t.Errorf("objects delete: %q", out)
		}
		if r := rmsctl(t, "firmware", "objects", "get", id); r.code != 4 || !strings.Contains(r.stderr, id) {
			t.Errorf("objects get after delete: exit %d, %q; want 4", r.code, r.stderr)
		}
		// NOT_FOUND, as upstream's DeleteFirmwareObject: rmsctl's exit 4.
		if r := rmsctl(t, "firmware", "objects", "delete", id); r.code != 4 || !strings.Contains(r.stderr, "not found") {
			t.Errorf("deleting it again: exit %d, %q; want 4", r.code, r.stderr)
		}
		if out := ok(t, "firmware", "objects", "history", id); !strings.Contains(out, id) || !strings.Contains(out, "no") {
			t.Errorf("the history outlives the object, no longer in the catalog:\n%s", out)
		}
	})
}

func simulatedNodesFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(daemonDir, "simulated-nodes.json")
}

// startApply applies the object to nodes without --watch and returns the
// parent job's id.
func startApply(t *testing.T, object, nodesFile string, nodes ...string) string {
	t.Helper()
	args := append([]string{"-o", "json", "firmware", "apply", "--object", object, "--rack", rack, "--nodes", nodesFile}, nodes...)
	applied := jsonReply(t, ok(t, args...), func() *rmspb.ApplyStoredFirmwareObjectResponse { return &rmspb.ApplyStoredFirmwareObjectResponse{} })
	if applied.GetResponse().GetJobId() == "" || len(applied.GetJobs()) != len(nodes) {
		t.Fatalf("apply: %v", applied)
	}
	return applied.GetResponse().GetJobId()
}

// watchInTerminal runs `rmsctl jobs watch` on a pseudo-terminal of 160x60
// and returns everything it drew and its exit code.
func watchInTerminal(t *testing.T, job string) (string, int) {
	t.Helper()
	return watchInTerminalUntil(t, job, "")
}

// watchInTerminalUntil is watchInTerminal that, when interruptOn is not
// empty, sends SIGINT once the terminal shows it.
func watchInTerminalUntil(t *testing.T, job, interruptOn string) (string, int) {
	t.Helper()
	interrupted := interruptOn == ""
	out, code := inTerminal(t, &pty.Winsize{Rows: 60, Cols: 160}, func(shown string, cmd *exec.Cmd, _ *os.File) {
		if !interrupted && strings.Contains(shown, interruptOn) {
			interrupted = true
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Error(err)
			}
		}
	}, "jobs", "watch", job, "--interval", "100ms")
	if !interrupted {
		t.Errorf("the terminal never showed %q", interruptOn)
	}
	return out, code
}

// inTerminal runs rmsctl with args in the daemon's directory on a
// pseudo-terminal of size (nil: one that reports no size) and returns
// everything it drew, until it exited, and its exit code. react, when not
// nil, sees everything drawn so far after each read, with the process and
// the terminal to type on.
func inTerminal(t *testing.T, size *pty.Winsize, react func(shown string, cmd *exec.Cmd, tty *os.File), args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rmsctlBinary, append([]string{"--addr", daemonAddr}, args...)...)
	cmd.Dir = daemonDir
	cmd.Env = append(environWithout("COLUMNS", "LINES"), "XDG_CONFIG_HOME="+t.TempDir(), "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, size)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	chunks := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				chunks <- bytes.Clone(buf[:n])
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	var out bytes.Buffer
	// Everything the process draws, until it exits and the terminal reads EIO.
	for chunk := range chunks {
		out.Write(chunk)
		if react != nil {
			react(out.String(), cmd, tty)
		}
	}
	if err := <-readErr; !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("reading the terminal: %v", err)
	}
	werr := cmd.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		code = exit.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	return out.String(), code
}

// assertDrawsBars checks a terminal view: bars redrawn in place (cursor
// movement escapes), bar characters, the parent's bar and one per node.
func assertDrawsBars(t *testing.T, out string, nodes ...string) {
	t.Helper()
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("no terminal escape sequence: the view is not drawn in place:\n%q", out)
	}
	if !strings.Contains(out, "[====") || !strings.Contains(out, "%") {
		t.Errorf("no progress bar drawn:\n%q", out)
	}
	if !strings.Contains(out, "/2 children finished: ") {
		t.Errorf("no parent bar counting the children:\n%q", out)
	}
	for _, n := range nodes {
		if !strings.Contains(out, "rack-001/"+n) {
			t.Errorf("no bar for %s:\n%q", n, out)
		}
	}
}

package docs

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The API guide is run as written: every shell block of api.md, in order,
// in one bash, against a fresh `rmsd --simulate`. The convention the guide
// states in "Trying the examples":
//
//   - a command's expected output follows it as `# => ` comment lines: an
//     excerpt, each line to be found in the output (after the previous
//     one), whole, leading and trailing blanks and a trailing comma aside;
//   - `<...>` in an expected line (`<job id>`, `<timestamp>`) stands for
//     any text;
//   - a command that must fail says so with `# => (exit N)`; any other
//     non-zero exit fails the test.
//
// The examples dial rmsd's default address; the test substitutes the
// daemon's own (a free port) and gives rmsctl the same one through its
// config file, so the guide's text stays what a reader types.

// daemonCommand is the guide's first example, which starts the daemon:
// the test starts it itself, as that command would but on a free port.
const daemonCommand = "go run ./cmd/rmsd --simulate"

// guideAddr is the address the guide's examples dial.
const guideAddr = "127.0.0.1:8801"

// guideNetwork is the second octet of the simulated devices' loopback
// addresses, one no other test package uses.
const guideNetwork = 141

// guideTimeScale is the simulator's time scale for the run: a fifth of
// the default's durations, so the guide's firmware flashes and reboots
// take seconds in all, still long enough for every reboot to be seen.
const guideTimeScale = "0.002"

// stepTimeout bounds one example (a wait for a job included).
const stepTimeout = 4 * time.Minute

// step is one command of the guide with the output it documents.
type step struct {
	line     int    // line number in the guide
	command  string // continuation lines joined
	expected []string
}

// guideSteps returns the commands of the guide's sh blocks, in order.
func guideSteps(guide string) []step {
	var steps []step
	inBlock := false
	lines := strings.Split(guide, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case !inBlock && strings.TrimSpace(line) == "```sh":
			inBlock = true
			continue
		case inBlock && strings.TrimSpace(line) == "```":
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		trimmed := strings.TrimSpace(line)
		if want, ok := strings.CutPrefix(trimmed, "# =>"); ok {
			if len(steps) > 0 {
				steps[len(steps)-1].expected = append(steps[len(steps)-1].expected, strings.TrimSpace(want))
			}
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		s := step{line: i + 1, command: line}
		for strings.HasSuffix(s.command, `\`) && i+1 < len(lines) {
			i++
			s.command = strings.TrimSuffix(s.command, `\`) + "\n" + lines[i]
		}
		steps = append(steps, s)
	}
	return steps
}

// placeholder is `<anything>` in an expected line.
var placeholder = regexp.MustCompile(`<[^<>]*>`)

// blanks are runs of white space, compared as one space.
var blanks = regexp.MustCompile(`\s+`)

// normalise trims a line, drops a trailing comma and reads every run of
// white space as one space.
func normalise(line string) string {
	return blanks.ReplaceAllString(strings.TrimSuffix(strings.TrimSpace(line), ","), " ")
}

// linePattern compiles an expected line: literal text, placeholders
// matching any text.
func linePattern(want string) *regexp.Regexp {
	want = normalise(want)
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range placeholder.FindAllStringIndex(want, -1) {
		b.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		b.WriteString(".*")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(want[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// missingLines returns the expected lines that output does not show in
// order, nil when it shows them all.
func missingLines(output string, expected []string) []string {
	lines := strings.Split(output, "\n")
	at := 0
	for i, want := range expected {
		re := linePattern(want)
		found := false
		for at < len(lines) {
			got := normalise(lines[at])
			at++
			if re.MatchString(got) {
				found = true
				break
			}
		}
		if !found {
			return expected[i:]
		}
	}
	return nil
}

// TestGuideExpectationsMatch is the control of the comparison the guide
// run relies on.
func TestGuideExpectationsMatch(t *testing.T) {
	out := "{\n  \"jobId\": \"6f1c\",\n  \"status\":  \"RETURN_CODE_SUCCESS\"\n}\n(exit 4)"
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{`"status": "RETURN_CODE_SUCCESS"`}, true},
		{[]string{`"jobId": "<job id>"`, `"status": "RETURN_CODE_SUCCESS"`}, true},
		{[]string{`"status": "RETURN_CODE_SUCCESS"`, `"jobId": "<job id>"`}, false}, // out of order
		{[]string{`"status": "RETURN_CODE_FAILURE"`}, false},
		{[]string{`"status"`}, false}, // a whole line, not a part of one
		{[]string{`(exit 4)`}, true},
		{[]string{`(exit 1)`}, false},
	} {
		if got := missingLines(out, c.want) == nil; got != c.ok {
			t.Errorf("%q in the output: %v, want %v", c.want, got, c.ok)
		}
	}
	steps := guideSteps("text\n```sh\n# a comment\nA=1 \\\n  B=2\n# => one\n\necho x\n# => x\n```\n```json\n{}\n```\n")
	if len(steps) != 2 || steps[0].command != "A=1 \n  B=2" || len(steps[0].expected) != 1 || steps[1].expected[0] != "x" {
		t.Fatalf("steps: %+v", steps)
	}
}

// TestAPIGuideRunsAsWritten runs every example of api.md in order against
// a fresh `rmsd --simulate` and checks each documented result.
func TestAPIGuideRunsAsWritten(t *testing.T) {
	steps := guideSteps(readGuide(t, "api.md"))
	if len(steps) < 100 {
		t.Fatalf("only %d commands found in api.md", len(steps))
	}
	bin := buildGuideTools(t)
	dir := t.TempDir()
	addr := startGuideDaemon(t, filepath.Join(bin, "rmsd"), dir)

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "rmsctl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "rmsctl", "config.toml"), fmt.Appendf(nil, "addr = %q\n", addr), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := startShell(t, dir, append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_CONFIG_HOME="+home))

	if steps[0].command != daemonCommand {
		t.Fatalf("api.md:%d: the first example is %q, not the daemon's start, %q", steps[0].line, steps[0].command, daemonCommand)
	}
	for _, s := range steps[1:] {
		command := strings.ReplaceAll(s.command, guideAddr, addr)
		out, code, err := sh.run(command, stepTimeout)
		if err != nil {
			t.Fatalf("api.md:%d: %s\n%v\noutput:\n%s", s.line, s.command, err, out)
		}
		if code != 0 {
			out += fmt.Sprintf("\n(exit %d)", code)
		}
		missing := missingLines(out, s.expected)
		failedUnexpectedly := code != 0 && !containsExit(s.expected, code)
		if missing != nil || failedUnexpectedly {
			t.Errorf("api.md:%d: %s\nexit status %d; documented lines not seen: %q\noutput:\n%s", s.line, s.command, code, missing, clip(out))
		}
	}
}

func containsExit(expected []string, code int) bool {
	for _, e := range expected {
		if e == fmt.Sprintf("(exit %d)", code) {
			return true
		}
	}
	return false
}

// clip keeps a failure message readable.
func clip(s string) string {
	const most = 4000
	if len(s) <= most {
		return s
	}
	return s[:most/2] + "\n[...]\n" + s[len(s)-most/2:]
}

// guideTools are the third-party commands the guide runs, at pinned
// versions, installed from the Go module proxy (checked against the
// checksum database) with their own go.mod, so rmsd's dependencies do not
// change for them. Both are MIT-licensed.
var guideTools = map[string]string{
	"grpcurl": "github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4",
	"jq":      "github.com/itchyny/gojq/cmd/gojq@v0.12.17",
}

// buildGuideTools builds what the guide runs into one directory for PATH:
// rmsd and rmsctl from this module, grpcurl and jq (gojq) at the versions
// guideTools pins.
func buildGuideTools(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/rmsd/rmsd/cmd/rmsd", "github.com/rmsd/rmsd/cmd/rmsctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build rmsd rmsctl: %v\n%s", err, out)
	}
	for name, pkg := range guideTools {
		install := exec.CommandContext(ctx, "go", "install", pkg)
		// Outside this module: GOFLAGS such as -mod=vendor do not apply.
		install.Dir = bin
		install.Env = append(environWithout("GOFLAGS=", "GOBIN="), "GOBIN="+bin, "GOFLAGS=")
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("go install %s: %v\n%s", pkg, err, out)
		}
		if name != filepath.Base(strings.Split(pkg, "@")[0]) {
			if err := os.Rename(filepath.Join(bin, filepath.Base(strings.Split(pkg, "@")[0])), filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return bin
}

// startGuideDaemon runs `rmsd --simulate` in dir, as the guide starts it
// but on a free port and a loopback network of its own, and returns its
// address once it serves; it is stopped (SIGTERM, then waited for) when
// the test ends.
func startGuideDaemon(t *testing.T, rmsd, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `
port = 0
[server]
drain_delay_seconds = 0
[metrics]
port = 0
[simulator]
network = %d
time_scale = %s
bmc_port = 0
nvue_port = 0
ssh_port = 0
nmx_port = 0
gnmi_port = 0
`, guideNetwork, guideTimeScale), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rmsd, "--config", cfg, "--simulate")
	cmd.Dir = dir
	cmd.Env = environWithout("DATABASE_URL", "RMS_")
	logFile, err := os.Create(filepath.Join(dir, "rmsd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(io.TeeReader(stdout, logFile))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct{ Message, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "rmsd serving" {
				addrs <- line.Addr
			}
		}
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		_ = logFile.Close()
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("rmsd's log (last part):\n%s", clip(string(b)))
			}
		}
	})
	select {
	case addr := <-addrs:
		return addr
	case <-done:
		t.Fatal("rmsd --simulate exited before serving")
	case <-time.After(2 * time.Minute):
		t.Fatal("rmsd --simulate did not log 'rmsd serving' within two minutes")
	}
	return ""
}

// environWithout is the environment without the variables of the given
// names or name prefixes.
func environWithout(prefixes ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// shell is one bash the guide's commands run in, one after the other, so
// the functions and variables a command defines are there for the next.
type shell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	marker string
}

func startShell(t *testing.T, dir string, env []string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	s := &shell{cmd: cmd, stdin: stdin, lines: make(chan string, 1024), marker: "guide-step-done-" + hex.EncodeToString(nonce[:])}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for line := range s.lines {
			_ = line // drained until the reader ends
		}
		<-done
		_ = cmd.Wait()
	})
	if _, _, err := s.run("set -o pipefail", time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs one command in the shell and returns its output (stdout and
// stderr) and exit status.
func (s *shell) run(command string, timeout time.Duration) (string, int, error) {
	script := fmt.Sprintf("{\n%s\n} </dev/null 2>&1\nprintf '\\n%s %%d\\n' \"$?\"\n", command, s.marker)
	if _, err := io.WriteString(s.stdin, script); err != nil {
		return "", 0, fmt.Errorf("write to bash: %w", err)
	}
	var out []string
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return strings.Join(out, "\n"), 0, errors.New("bash exited")
			}
			if rest, found := strings.CutPrefix(line, s.marker+" "); found {
				var code int
				if _, err := fmt.Sscan(rest, &code); err != nil {
					return "", 0, fmt.Errorf("exit status %q: %w", rest, err)
				}
				return strings.TrimSuffix(strings.Join(out, "\n"), "\n"), code, nil
			}
			out = append(out, line)
		case <-deadline:
			return strings.Join(out, "\n"), 0, fmt.Errorf("still running after %v", timeout)
		}
	}
}

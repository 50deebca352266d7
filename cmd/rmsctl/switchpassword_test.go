package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// passwordSwitch is the switch whose NVOS user "ops" the tests give
// passwords; the nodes file's own login (admin) is left alone.
const passwordSwitch = "rack-001-switch-04"

// nvueLogin says whether the simulated switch's NVUE API accepts user and
// password: the simulator's own answer, not rmsd's.
func nvueLogin(t *testing.T, user, password string) bool {
	t.Helper()
	var host *rmspb.Endpoint
	for _, n := range simulatedNodes(t).GetNodes() {
		if n.GetNodeId() == passwordSwitch {
			host = n.GetHostEndpoint()
		}
	}
	if host == nil {
		t.Fatalf("%s not in the nodes file", passwordSwitch)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		// The simulator's certificate is its own; this checks passwords only.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test against the simulator
	}}
	defer client.CloseIdleConnections()
	url := "https://" + net.JoinHostPort(host.GetInterface().GetIpAddress(), strconv.Itoa(int(host.GetPort()))) + "/nvue_v1/platform"
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// noSecret fails the test when any output holds one of the passwords.
func noSecret(t *testing.T, what string, outputs []string, passwords ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, pw := range passwords {
			if strings.Contains(out, pw) {
				t.Errorf("%s printed the new password", what)
			}
		}
	}
}

func TestSwitchPasswordFromStdinAndFile(t *testing.T) {
	const first, second = "Ops-1st-Secret-5813", "Ops-2nd-Secret-9047"

	// From standard input, watched: the switch takes the new password.
	r := rmsctlWithInput(t, first+"\n", "switch", "password", "--rack", rack, "--user", "ops", "--password-stdin",
		passwordSwitch, "--watch", "--interval", "100ms")
	if r.code != 0 || !strings.Contains(r.stdout, "Completed") {
		t.Fatalf("switch password --password-stdin --watch: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	noSecret(t, "switch password --password-stdin", []string{r.stdout, r.stderr}, first)
	if !nvueLogin(t, "ops", first) {
		t.Fatal("the switch does not accept ops's new password")
	}

	// From a file, -o json: the reply names the job, never the password.
	file := filepath.Join(t.TempDir(), "ops.pw")
	if err := os.WriteFile(file, []byte(second+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "-o", "json", "switch", "password", "--rack", rack, "--user", "ops", "--password-file", file, passwordSwitch)
	noSecret(t, "switch password --password-file", []string{out}, second)
	started := jsonReply(t, out, func() *rmspb.UpdateSwitchSystemPasswordResponse { return &rmspb.UpdateSwitchSystemPasswordResponse{} })
	job := started.GetResponse().GetJobId()
	if job == "" {
		t.Fatalf("-o json switch password: %v", started)
	}
	watched := ok(t, "jobs", "watch", job, "--interval", "100ms")
	noSecret(t, "jobs watch of the password change", []string{watched, ok(t, "-o", "json", "jobs", "get", job)}, first, second)
	if !nvueLogin(t, "ops", second) || nvueLogin(t, "ops", first) {
		t.Error("after the second change, the switch should take only the second password")
	}
}

// TestSwitchPasswordPromptsWithoutEcho: on a terminal with neither flag,
// the password is typed twice at prompts that do not echo it; without a
// terminal to prompt on, rmsctl asks for a flag and sends nothing.
func TestSwitchPasswordPromptsWithoutEcho(t *testing.T) {
	const typed = "Ops-Typed-Secret-2291"
	prompts := 0
	out, code := inTerminal(t, &pty.Winsize{Rows: 40, Cols: 120}, func(shown string, _ *exec.Cmd, tty *os.File) {
		for prompts < 2 && strings.Count(shown, "ew password: ") > prompts {
			prompts++
			if _, err := tty.WriteString(typed + "\r"); err != nil {
				t.Error(err)
			}
		}
	}, "switch", "password", "--rack", rack, "--user", "ops", passwordSwitch, "--watch", "--interval", "100ms")
	if code != 0 || prompts != 2 || !strings.Contains(out, "Retype new password: ") || !strings.Contains(out, "Completed") {
		t.Fatalf("switch password at a terminal prompt: exit %d after %d prompt(s):\n%q", code, prompts, out)
	}
	noSecret(t, "the prompt (echo)", []string{out}, typed)
	if !nvueLogin(t, "ops", typed) {
		t.Error("the switch does not accept the password typed at the prompt")
	}

	// Ctrl-C at the prompt ends rmsctl, nothing sent.
	signalled := false
	out, code = inTerminal(t, &pty.Winsize{Rows: 40, Cols: 120}, func(shown string, cmd *exec.Cmd, _ *os.File) {
		if !signalled && strings.Contains(shown, "New password: ") {
			signalled = true
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Error(err)
			}
		}
	}, "switch", "password", "--rack", rack, "--user", "ops", passwordSwitch)
	if code != 130 || !strings.Contains(out, "interrupted: nothing was sent") {
		t.Errorf("Ctrl-C at the prompt: exit %d:\n%q", code, out)
	}

	r := rmsctlWithInput(t, "", "switch", "password", "--rack", rack, "--user", "ops", passwordSwitch)
	if r.code != 2 || !strings.Contains(r.stderr, "--password-file FILE or --password-stdin") {
		t.Errorf("no password source and no terminal: exit %d, %q; want 2 naming the flags", r.code, r.stderr)
	}
	if r := rmsctlWithInput(t, "\n", "switch", "password", "--rack", rack, "--user", "ops", "--password-stdin", passwordSwitch); r.code != 2 || !strings.Contains(r.stderr, "empty") {
		t.Errorf("an empty password: exit %d, %q; want 2", r.code, r.stderr)
	}
	if !nvueLogin(t, "ops", typed) {
		t.Error("a refused request changed the password")
	}
}

// rmsctlWithInput is rmsctl with input as its standard input (a pipe).
func rmsctlWithInput(t *testing.T, input string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rmsctlBinary, append([]string{"--addr", daemonAddr}, args...)...)
	cmd.Dir = daemonDir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("rmsctl %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

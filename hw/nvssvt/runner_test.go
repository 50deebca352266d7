package nvssvt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvssvt"
)

// secret is the BMC password of the helper scans.
const secret = "s3cret-Pa55"

func helperScan(id string) nvssvt.Scan {
	return nvssvt.Scan{ID: id, NodeID: "node-" + id,
		BMC: hw.Endpoint{IP: "127.0.0.1", Port: 1, Credentials: hw.UserPass("admin", secret)}}
}

func TestRunReadsAPassingReport(t *testing.T) {
	r := helperRunner(t, modePass, nil)
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Report == nil || res.Report.Status != nvssvt.StatusPass {
		t.Fatalf("result %+v", res)
	}
	if s := res.Report.Summary; s.Total != 2 || s.Passed != 2 {
		t.Errorf("summary %+v", s)
	}
	if res.Report.DUTs[0].ID != "node-a" {
		t.Errorf("DUT id %q, want the --dut-id the runner passed", res.Report.DUTs[0].ID)
	}
	if filepath.Base(res.LogDir) != "a" {
		t.Errorf("log dir %s is not named by the scan id", res.LogDir)
	}
	for _, name := range []string{"stdout.log", "stderr.log", nvssvt.ReportFile} {
		if _, err := os.Stat(filepath.Join(res.LogDir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestRunReportsFailedChecksWithoutError(t *testing.T) {
	r := helperRunner(t, modeFailChecks, nil)
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 1 || res.Report.Status != nvssvt.StatusFail {
		t.Fatalf("exit %d, status %s", res.ExitCode, res.Report.Status)
	}
	if got := res.Report.FailedChecks(); len(got) != 1 || got[0] != "fans: fan 3 stopped" {
		t.Errorf("failed checks %q", got)
	}
}

func TestRunFailsWithoutAUsableReport(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want error
		says []string
	}{
		{modeGarbled, nvssvt.ErrReport, []string{"not a JSON object"}},
		{modeNoReport, nvssvt.ErrReport, []string{"wrote no report"}},
		{modeCrash, nvssvt.ErrExit, []string{"exit status 3", "fatal: no license for this DUT"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			r := helperRunner(t, tc.mode, nil)
			res, err := r.Run(context.Background(), helperScan("a"), nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if res.Report != nil || res.LogDir == "" {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestRunCapsOutput(t *testing.T) {
	const max = 64 << 10
	r := helperRunner(t, modeSpew, func(c *nvssvt.Config) { c.MaxOutput = max })
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutputTruncated || res.Report.Status != nvssvt.StatusPass {
		t.Fatalf("truncated %v, status %s", res.OutputTruncated, res.Report.Status)
	}
	for _, name := range []string{"stdout.log", "stderr.log"} {
		st, err := os.Stat(filepath.Join(res.LogDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() < max || st.Size() > max+512 {
			t.Errorf("%s holds %d bytes of 8 MiB written, want the %d-byte cap and a note", name, st.Size(), max)
		}
	}
}

func TestRunScrubsSecretsFromOutputAndErrors(t *testing.T) {
	r := helperRunner(t, modeLeakSecret, nil)
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if !errors.Is(err, nvssvt.ErrExit) {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error %q", err)
	}
	for _, name := range []string{"stdout.log", "stderr.log"} {
		b, err := os.ReadFile(filepath.Join(res.LogDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[REDACTED]") {
			t.Errorf("%s: %q", name, b)
		}
	}
}

// A password that the stdout cap or the start of the stderr tail cuts
// leaves no piece of itself in the logs or the error quoting the tail.
func TestRunScrubsSecretsTheOutputCapAndTailCut(t *testing.T) {
	r := helperRunner(t, modeLeakCut, func(c *nvssvt.Config) { c.MaxOutput = leakCap })
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if !errors.Is(err, nvssvt.ErrExit) {
		t.Fatalf("error %v", err)
	}
	// The tail made it into the error: it starts inside the password.
	if f := fragment(err.Error(), secret); f != "" || !strings.Contains(err.Error(), ": yyyy") {
		t.Errorf("error %q (holds %q of the password)", err, f)
	}
	if f := fragment(res.StderrTail, secret); f != "" {
		t.Errorf("stderr tail %q holds %q of the password", res.StderrTail, f)
	}
	for name, want := range map[string]string{"stdout.log": "more bytes dropped", "stderr.log": "[REDACTED]"} {
		b, err := os.ReadFile(filepath.Join(res.LogDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if f := fragment(string(b), secret); f != "" || !strings.Contains(string(b), want) {
			t.Errorf("%s holds %q of the password: %q", name, f, b)
		}
	}
}

// fragment returns a piece of secret at least 4 bytes long that s holds,
// or "".
func fragment(s, secret string) string {
	for i := 0; i+4 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+4]) {
			return secret[i : i+4]
		}
	}
	return ""
}

func TestCredentialsTravelInTheEnvironmentOnly(t *testing.T) {
	t.Setenv("RMSD_TEST_UNRELATED", "must-not-leak")
	r := helperRunner(t, modeHang, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scan := helperScan("a")
	scan.Host = &hw.Endpoint{IP: "127.0.0.2", Credentials: hw.UserPass("root", "h0st-Pa55")}
	scan.ConfigOverride = `{"suite": "quick", "note": "two words; $(no shell)"}`
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, scan, nil)
		done <- err
	}()
	pid := waitPID(t, filepath.Join(logRoot(r, scan), "parent.pid"))
	cmdline := procFile(t, pid, "cmdline")
	args := strings.Split(strings.TrimSuffix(cmdline, "\x00"), "\x00")
	want := []string{nvssvt.FlagDUTID, "node-a", nvssvt.FlagBMC, "127.0.0.1:1", nvssvt.FlagHost, "127.0.0.2:22"}
	if !containsSeq(args, want) || !containsSeq(args, []string{nvssvt.FlagConfigOverride, scan.ConfigOverride}) {
		t.Errorf("argv %q lacks %q or the override as one argument", args, want)
	}
	if strings.Contains(cmdline, secret) || strings.Contains(cmdline, "h0st-Pa55") || strings.Contains(cmdline, "admin") {
		t.Errorf("credentials on the command line: %q", args)
	}
	env := strings.Split(procFile(t, pid, "environ"), "\x00")
	for _, kv := range []string{nvssvt.EnvBMCUsername + "=admin", nvssvt.EnvBMCPassword + "=" + secret,
		nvssvt.EnvHostUsername + "=root", nvssvt.EnvHostPassword + "=h0st-Pa55"} {
		if !containsSeq(env, []string{kv}) {
			t.Errorf("environment lacks %s", strings.SplitN(kv, "=", 2)[0])
		}
	}
	if strings.Contains(strings.Join(env, "\n"), "must-not-leak") {
		t.Error("rmsd's own environment leaked into the run")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	waitGone(t, pid)
}

// A run over its time bound is killed and says so. (A timeout and a
// cancel end the run the same way, through the process group: see
// TestCancelKillsTheWholeProcessGroup.)
func TestTimeoutKillsTheRun(t *testing.T) {
	r := helperRunner(t, modeHang, func(c *nvssvt.Config) { c.Timeout = 2 * time.Second })
	res, err := r.Run(context.Background(), helperScan("a"), nil)
	if !errors.Is(err, nvssvt.ErrTimeout) || !strings.Contains(err.Error(), "after 2s and was killed") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if res.ExitCode != -1 {
		t.Errorf("exit code %d of a killed run", res.ExitCode)
	}
}

// Ending a run kills NVSSVT's whole process group: the child the helper
// started in its group goes with it. The run's bound is a minute, so both
// processes are surely up before the cancel ends it.
func TestCancelKillsTheWholeProcessGroup(t *testing.T) {
	r := helperRunner(t, modeHang, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scan := helperScan("a")
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, scan, nil)
		done <- err
	}()
	var pids []int
	for _, name := range []string{"parent.pid", "child.pid"} {
		pids = append(pids, waitPID(t, filepath.Join(logRoot(r, scan), name)))
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end after its cancel")
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
}

func TestCancelKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	r := helperRunner(t, modeStubborn, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scan := helperScan("a")
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, scan, nil)
		done <- err
	}()
	pid := waitPID(t, filepath.Join(logRoot(r, scan), "parent.pid"))
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end after its cancel")
	}
	waitGone(t, pid)
}

func TestConcurrentRunsAreBounded(t *testing.T) {
	r := helperRunner(t, modeHang, func(c *nvssvt.Config) { c.MaxConcurrent = 1 })
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	a, b := helperScan("a"), helperScan("b")
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() { _, err := r.Run(ctxA, a, nil); doneA <- err }()
	waitPID(t, filepath.Join(logRoot(r, a), "parent.pid"))
	progress := make(chan string, 2)
	go func() {
		_, err := r.Run(ctxB, b, func(d string) { progress <- d })
		doneB <- err
	}()
	select {
	case d := <-progress:
		if d != "Waiting for a free NVSSVT slot (1 of 1 in use)" {
			t.Errorf("progress %q", d)
		}
	case <-time.After(time.Minute):
		t.Fatal("the second scan did not wait for a slot")
	}
	if _, err := os.Stat(filepath.Join(logRoot(r, b))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the waiting scan started: %v", err)
	}
	cancelA()
	<-doneA
	waitPID(t, filepath.Join(logRoot(r, b), "parent.pid")) // b got the slot
	if d := <-progress; d != "NVSSVT scan running" {
		t.Errorf("progress %q once the slot is free", d)
	}
	cancelB()
	if err := <-doneB; !errors.Is(err, context.Canceled) {
		t.Errorf("b: %v", err)
	}
}

func TestScansNVSSVTCannotRunAreRefused(t *testing.T) {
	r := helperRunner(t, modePass, nil)
	noCreds := helperScan("a")
	noCreds.BMC.Credentials = hw.Credentials{}
	if _, err := r.Run(context.Background(), noCreds, nil); !errors.Is(err, nvssvt.ErrNoCredentials) {
		t.Errorf("without credentials: %v", err)
	}
	token := helperScan("b")
	token.BMC.Credentials = hw.SessionToken("tok")
	if _, err := r.Run(context.Background(), token, nil); !errors.Is(err, nvssvt.ErrNoCredentials) {
		t.Errorf("with a session token: %v", err)
	}
	if _, err := nvssvt.New(nvssvt.Config{}).Run(context.Background(), helperScan("c"), nil); !errors.Is(err, nvssvt.ErrNotConfigured) {
		t.Errorf("without a path: %v", err)
	}
	missing := nvssvt.New(nvssvt.Config{Path: filepath.Join(t.TempDir(), "no-such-nvssvt"), LogRoot: t.TempDir()})
	if _, err := missing.Run(context.Background(), helperScan("d"), nil); !errors.Is(err, nvssvt.ErrStart) {
		t.Errorf("a missing executable: %v", err)
	}
}

// logRoot is the log directory a scan of r gets.
func logRoot(r *nvssvt.Runner, s nvssvt.Scan) string { return filepath.Join(r.LogRoot(), s.ID) }

// waitPID waits for a helper to record its pid in path.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after a minute", path)
		}
		time.Sleep(10 * time.Millisecond) // polling a file the helper writes; no event to wait on
	}
}

// waitGone waits until pid has exited (gone, or a zombie its new parent
// has not reaped yet).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
		if err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs a minute after its run ended", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func procFile(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// containsSeq reports whether want appears in s, consecutively.
func containsSeq(s, want []string) bool {
	for i := 0; i+len(want) <= len(s); i++ {
		match := true
		for j := range want {
			if s[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// TestRelativePathsAreResolvedBeforeTheRun: the default nvssvt_log_dir is
// relative ("nvssvt") and the process runs inside its log directory, so a
// relative log root or executable must still reach the right files.
func TestRelativePathsAreResolvedBeforeTheRun(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "nvssvt")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := nvssvt.New(nvssvt.Config{Path: "./nvssvt", Args: []string{helperCommand, modePass}, LogRoot: "logs",
		Timeout: time.Minute, TermGrace: 200 * time.Millisecond})
	res, err := r.Run(context.Background(), helperScan("rel"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report == nil || res.Report.Status != nvssvt.StatusPass {
		t.Fatalf("result %+v", res)
	}
	if want := filepath.Join(dir, "logs", "rel"); res.LogDir != want {
		t.Errorf("log dir %s, want %s", res.LogDir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "rel", nvssvt.ReportFile)); err != nil {
		t.Error(err)
	}
}

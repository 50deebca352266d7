package nvssvt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

// The tests run real processes: this test binary again, as `<binary>
// helper <mode> <the contract's arguments>`, in one of the modes below, or
// as the stand-in (`<binary> nvssvt-sim ...`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case nvssvtsim.Command:
			os.Exit(nvssvtsim.Main(context.Background(), os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
		case helperCommand:
			os.Exit(helper(os.Args[2], os.Args[3:]))
		}
	}
	goleak.VerifyTestMain(m)
}

const helperCommand = "nvssvt-helper"

// The leak-cut mode's output: the stdout cap it is run with, and where the
// cap and the stderr tail cut the password.
const leakCap, leakCutAt = 4096, 5

// Helper modes.
const (
	modePass       = "pass"        // a passing report, exit 0
	modeFailChecks = "fail-checks" // a report with a failed check, exit 1
	modeSpew       = "spew"        // 8 MiB on stdout and stderr, then a passing report
	modeGarbled    = "garbled"     // a report that is not JSON, exit 0
	modeNoReport   = "no-report"   // exit 0 without a report
	modeCrash      = "crash"       // a message on stderr, exit 3
	modeLeakSecret = "leak-secret" // the BMC password on stdout and stderr, exit 3
	modeLeakCut    = "leak-cut"    // the BMC password across the stdout cap (leakCap) and the stderr tail's start, exit 3
	modeHang       = "hang"        // starts a child in its group, records both pids, sleeps
	modeHangChild  = "hang-child"  // the child: sleeps
	modeStubborn   = "stubborn"    // ignores SIGTERM, records its pid, sleeps
)

// helper is the test program's main in mode.
func helper(mode string, args []string) int {
	flags := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		flags[args[i]] = args[i+1]
	}
	report, logDir := flags[nvssvt.FlagReport], flags[nvssvt.FlagLogDir]
	write := func(doc string) {
		if err := os.WriteFile(report, []byte(doc), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(9)
		}
	}
	passing := `{"tool":"helper","status":"PASS","duts":[{"id":"` + flags[nvssvt.FlagDUTID] + `","status":"PASS",` +
		`"checks":[{"name":"one","status":"PASS"},{"name":"two","status":"PASS"}]}]}`
	recordPID := func(name string) {
		_ = os.WriteFile(filepath.Join(logDir, name), []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	switch mode {
	case modePass:
		write(passing)
		return 0
	case modeFailChecks:
		write(`{"duts":[{"id":"x","checks":[{"name":"one","status":"PASS"},{"name":"fans","status":"FAILED","message":"fan 3 stopped"}]}]}`)
		return 1
	case modeSpew:
		chunk := []byte(strings.Repeat("x", 64<<10) + "\n")
		for range 128 {
			_, _ = os.Stdout.Write(chunk)
			_, _ = os.Stderr.Write(chunk)
		}
		write(passing)
		return 0
	case modeGarbled:
		write(`{"duts": [ not json`)
		return 0
	case modeNoReport:
		return 0
	case modeCrash:
		fmt.Fprintln(os.Stderr, "starting")
		fmt.Fprintln(os.Stderr, "fatal: no license for this DUT")
		return 3
	case modeLeakSecret:
		fmt.Println("logging in with " + os.Getenv(nvssvt.EnvBMCPassword))
		fmt.Fprintln(os.Stderr, "login failed for password "+os.Getenv(nvssvt.EnvBMCPassword))
		return 3
	case modeLeakCut:
		// Each in two writes; stdout's cap keeps leakCutAt bytes of the
		// password, stderr's 1 KiB tail starts leakCutAt bytes into it.
		pw := os.Getenv(nvssvt.EnvBMCPassword)
		_, _ = os.Stdout.WriteString(strings.Repeat("x", leakCap-leakCutAt) + pw[:3])
		_, _ = os.Stdout.WriteString(pw[3:] + "\n" + strings.Repeat("x", 1000))
		_, _ = os.Stderr.WriteString("login failed for password " + pw[:leakCutAt+2])
		_, _ = os.Stderr.WriteString(pw[leakCutAt+2:] + strings.Repeat("y", 1024-(len(pw)-leakCutAt)))
		return 3
	case modeHang:
		child := exec.Command(os.Args[0], helperCommand, modeHangChild, nvssvt.FlagLogDir, logDir)
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 9
		}
		recordPID("parent.pid")
		select {}
	case modeHangChild:
		recordPID("child.pid")
		select {}
	case modeStubborn:
		signal.Ignore(syscall.SIGTERM)
		recordPID("parent.pid")
		select {}
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 9
}

// helperRunner runs the test program in mode.
func helperRunner(t *testing.T, mode string, tune func(*nvssvt.Config)) *nvssvt.Runner {
	t.Helper()
	cfg := nvssvt.Config{Path: testBinary(t), Args: []string{helperCommand, mode}, LogRoot: t.TempDir(),
		Timeout: time.Minute, TermGrace: 200 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	return nvssvt.New(cfg)
}

func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// readJSON reads a JSON file the run left.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

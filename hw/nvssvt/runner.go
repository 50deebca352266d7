package nvssvt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Defaults of a Config's zero fields.
const (
	DefaultTimeout       = 4 * time.Hour
	DefaultMaxOutput     = 1 << 20
	DefaultMaxConcurrent = 4
	// DefaultTermGrace is how long a process group has between SIGTERM
	// and SIGKILL once its run is over time or cancelled.
	DefaultTermGrace = 5 * time.Second
	// maxReport bounds the report file read.
	maxReport = 8 << 20
)

// Config is how a Runner runs NVSSVT.
type Config struct {
	// Path is the executable ([workflows] nvssvt_path); empty means
	// system validation is not configured.
	Path string
	// Args come before the contract's arguments: a multi-command binary's
	// command word (rmsd's own stand-in mode).
	Args []string
	// LogRoot holds one log directory per run, named by the scan's ID.
	LogRoot string
	// Timeout bounds one run (0: DefaultTimeout).
	Timeout time.Duration
	// MaxOutput bounds the bytes of stdout and of stderr kept (0:
	// DefaultMaxOutput).
	MaxOutput int64
	// MaxConcurrent bounds the processes running at once (0:
	// DefaultMaxConcurrent).
	MaxConcurrent int
	// TermGrace is the SIGTERM to SIGKILL grace (0: DefaultTermGrace).
	TermGrace time.Duration
}

// Runner runs NVSSVT scans. It is safe for concurrent use.
type Runner struct {
	cfg   Config
	slots chan struct{}
}

// New returns a runner for cfg, its zero fields defaulted. A relative
// LogRoot, and a relative Path naming a directory, are resolved against the
// working directory now: the process runs inside its log directory, where
// relative paths on its command line would otherwise name something else.
func New(cfg Config) *Runner {
	if cfg.LogRoot != "" {
		if abs, err := filepath.Abs(cfg.LogRoot); err == nil {
			cfg.LogRoot = abs
		}
	}
	if cfg.Path != "" && strings.ContainsRune(cfg.Path, filepath.Separator) {
		if abs, err := filepath.Abs(cfg.Path); err == nil {
			cfg.Path = abs
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = DefaultTermGrace
	}
	return &Runner{cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrent)}
}

// Configured reports whether an executable is set.
func (r *Runner) Configured() bool { return r != nil && r.cfg.Path != "" }

// Errors of a run, besides ErrReport.
var (
	// ErrNotConfigured: no executable is set.
	ErrNotConfigured = errors.New("system validation is not configured: set [workflows] nvssvt_path")
	// ErrStart: the process could not be started.
	ErrStart = errors.New("nvssvt could not be started")
	// ErrTimeout: the run outlasted its bound and was killed.
	ErrTimeout = errors.New("nvssvt run timed out")
	// ErrExit: the process exited with a status other than 0 or 1, or
	// with 1 and no report.
	ErrExit = errors.New("nvssvt failed")
)

// Result is what a finished run left.
type Result struct {
	// LogDir is the run's log directory (stdout.log, stderr.log, the
	// report and whatever NVSSVT writes there).
	LogDir string
	// ExitCode is the process's exit status (-1 when it was killed).
	ExitCode int
	// Report is the parsed report; nil when err says why there is none.
	Report *Report
	// Duration is how long the process ran.
	Duration time.Duration
	// OutputTruncated says stdout or stderr outgrew MaxOutput.
	OutputTruncated bool
	// StderrTail is the end of stderr (at most 1 KiB), secrets scrubbed.
	StderrTail string
}

// Progress is told what a scan is doing, as a job description: once
// "Waiting for a free NVSSVT slot (N of N in use)" when it has to wait,
// then "NVSSVT scan running" when its process starts.
type Progress func(description string)

// Run runs one scan: it waits for a slot, starts NVSSVT in its own process
// group and waits for it, within the run time; then it reads the report.
// A run that did not produce a usable report (killed, a start failure, an
// exit status other than 0 or 1, a missing or garbled report) returns an
// error with what is known in Result; a report is returned whatever the
// checks say (Report.Status). Cancelling ctx kills the run, as a timeout
// does, and returns the context's cause.
func (r *Runner) Run(ctx context.Context, s Scan, progress Progress) (Result, error) {
	if !r.Configured() {
		return Result{}, ErrNotConfigured
	}
	if err := s.Check(); err != nil {
		return Result{}, err
	}
	if progress == nil {
		progress = func(string) {}
	}
	select {
	case r.slots <- struct{}{}:
	default:
		progress(fmt.Sprintf("Waiting for a free NVSSVT slot (%d of %d in use)", len(r.slots), cap(r.slots)))
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return Result{}, context.Cause(ctx)
		}
	}
	defer func() { <-r.slots }()
	return r.run(ctx, s, progress)
}

// errOverTime is the cause of a run's context when its bound passes.
var errOverTime = errors.New("run time bound passed")

func (r *Runner) run(ctx context.Context, s Scan, progress Progress) (Result, error) {
	res := Result{LogDir: r.LogDir(s.ID)}
	if s.ID == "" || filepath.Base(s.ID) != s.ID {
		return res, fmt.Errorf("%w: scan id %q cannot name a log directory", ErrStart, s.ID)
	}
	if err := os.MkdirAll(r.cfg.LogRoot, 0o750); err != nil {
		return res, fmt.Errorf("%w: log directory: %v", ErrStart, err)
	}
	if err := os.Mkdir(res.LogDir, 0o700); err != nil {
		return res, fmt.Errorf("%w: log directory: %v", ErrStart, err)
	}
	report := filepath.Join(res.LogDir, ReportFile)
	secrets := s.secrets()
	stdout, err := newCapture(filepath.Join(res.LogDir, "stdout.log"), r.cfg.MaxOutput, secrets)
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrStart, err)
	}
	defer stdout.close()
	stderr, err := newCapture(filepath.Join(res.LogDir, "stderr.log"), r.cfg.MaxOutput, secrets)
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrStart, err)
	}
	defer stderr.close()

	runCtx, cancel := context.WithTimeoutCause(ctx, r.cfg.Timeout, errOverTime)
	defer cancel()
	cmd := exec.CommandContext(runCtx, r.cfg.Path, append(append([]string{}, r.cfg.Args...), s.args(res.LogDir, report)...)...)
	cmd.Env = s.env(os.Environ())
	cmd.Dir = res.LogDir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var kill *time.Timer
	cmd.Cancel = func() error {
		// The whole group: NVSSVT's own children go too.
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		kill = time.AfterFunc(r.cfg.TermGrace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return nil
	}
	// Wait returns at the latest this long after the process exits or the
	// run ends, even if a straggler of the group still holds the pipes.
	cmd.WaitDelay = r.cfg.TermGrace + time.Second
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("%w: %s: %v", ErrStart, r.cfg.Path, err)
	}
	progress("NVSSVT scan running")
	waitErr := cmd.Wait()
	res.Duration = time.Since(started)
	// Whatever of the group outlived its leader goes now; Wait reaped the
	// leader, the kernel's init reaps the rest.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if kill != nil {
		kill.Stop()
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	res.OutputTruncated = stdout.truncated() || stderr.truncated()
	res.StderrTail = stderr.tailText()

	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errOverTime):
		return res, fmt.Errorf("%w after %s and was killed", ErrTimeout, r.cfg.Timeout)
	case ctx.Err() != nil:
		return res, context.Cause(ctx)
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("%w: %v", ErrExit, waitErr)
	}
	if res.ExitCode != ExitPassed && res.ExitCode != ExitChecksFailed {
		return res, fmt.Errorf("%w: exit status %d%s", ErrExit, res.ExitCode, said(res))
	}
	rep, err := readReport(report)
	if err != nil {
		return res, fmt.Errorf("%w (exit status %d%s)", err, res.ExitCode, said(res))
	}
	if res.ExitCode == ExitChecksFailed && rep.Status == StatusPass {
		// The exit status wins over a report that says all passed.
		rep.Status = StatusFail
	}
	res.Report = rep
	return res, nil
}

// said quotes the end of stderr for an error message.
func said(res Result) string {
	if line := lastLine(res.StderrTail); line != "" {
		return ": " + line
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// readReport reads and parses the report file, bounded.
func readReport(path string) (*Report, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: nvssvt wrote no report", ErrReport)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReport, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReport+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReport, err)
	}
	if len(data) > maxReport {
		return nil, fmt.Errorf("%w: the report is larger than %d bytes", ErrReport, maxReport)
	}
	return ParseReport(data)
}

// LogDir is the log directory of the scan with id.
func (r *Runner) LogDir(id string) string { return filepath.Join(r.cfg.LogRoot, filepath.Base(id)) }

// LogRoot is the directory holding the runs' log directories.
func (r *Runner) LogRoot() string { return r.cfg.LogRoot }

package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// RunTime is the CPU time process pid has used so far, to the nanosecond:
// the sum over its live threads of the scheduler's run time
// (/proc/<pid>/task/<tid>/schedstat, first field). CPUTime counts in
// 10 ms ticks, too coarse for windows of a few tens of milliseconds; a
// thread that has exited no longer counts (a Go process keeps its threads,
// so over a window of its life the difference is its CPU time).
func RunTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list the threads of process %d: %w", pid, err)
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrProcessDone) {
			continue // the thread ended meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("read the run time of thread %s of process %d: %w", t.Name(), pid, err)
		}
		ns, err := parseSchedstat(b)
		if err != nil {
			return 0, fmt.Errorf("thread %s of process %d: %w", t.Name(), pid, err)
		}
		total += ns
	}
	return total, nil
}

// parseSchedstat reads the time on the CPU, in nanoseconds, from a
// schedstat line ("<on cpu ns> <waiting ns> <timeslices>").
func parseSchedstat(b []byte) (time.Duration, error) {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return 0, fmt.Errorf("schedstat line %q: want 3 fields", b)
	}
	ns, err := strconv.ParseUint(string(f[0]), 10, 63)
	if err != nil {
		return 0, fmt.Errorf("schedstat run time %q: %w", f[0], err)
	}
	return time.Duration(ns), nil
}

package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// measuredNice is the niceness lowerPriority gives a measured process.
const measuredNice = 10

// lowerPriority lowers the scheduling priority of every thread of process
// pid to measuredNice (threads it starts later inherit it), so that the
// harness, at its own priority, reads the process's CPU time as soon as it
// has an answer instead of queueing behind the work the answer released.
// Linux keeps a niceness per thread, hence the walk over its tasks.
func lowerPriority(pid int) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("lower the priority of process %d: %w", pid, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		err = syscall.Setpriority(syscall.PRIO_PROCESS, tid, measuredNice)
		if err == syscall.ESRCH {
			continue // the thread ended meanwhile
		}
		if err != nil {
			return fmt.Errorf("lower the priority of thread %d of process %d: %w", tid, pid, err)
		}
	}
	return nil
}

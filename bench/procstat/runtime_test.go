package procstat

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestParseSchedstatReadsTheRunTime(t *testing.T) {
	got, err := parseSchedstat([]byte("1234567890 555 12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1234567890 * time.Nanosecond; got != want {
		t.Errorf("parseSchedstat = %v, want %v (the first field, on-CPU nanoseconds)", got, want)
	}
	for _, bad := range []string{"", "12 34", "x 1 2", "-5 1 2"} {
		if _, err := parseSchedstat([]byte(bad)); err == nil {
			t.Errorf("parseSchedstat(%q) succeeded, want an error", bad)
		}
	}
}

// RunTime counts the work of every thread, not only the main one: two
// locked threads each burn CPU, and the process's run time grows by at
// least what they measured themselves, and agrees with the kernel's own
// tick count to within a few ticks.
func TestRunTimeCountsEveryThread(t *testing.T) {
	pid := os.Getpid()
	before, err := RunTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	ticksBefore, err := CPUTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	spent := make([]time.Duration, 2)
	for i := range spent {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := 0
			for spent[i] < 2*time.Second/ClockTicks {
				start, err := threadTime()
				if err != nil {
					t.Error(err)
					return
				}
				for j := range 1_000_000 {
					x += j
				}
				end, err := threadTime()
				if err != nil {
					t.Error(err)
					return
				}
				spent[i] += end - start
			}
			_ = x
		})
	}
	wg.Wait()
	after, err := RunTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	ticksAfter, err := CPUTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	grew := after - before
	if grew < spent[0]+spent[1] {
		t.Errorf("RunTime grew by %v while two threads spent %v and %v", grew, spent[0], spent[1])
	}
	if ticks := ticksAfter - ticksBefore; grew > ticks+time.Second || ticks > grew+time.Second {
		t.Errorf("RunTime grew by %v, the tick count by %v", grew, ticks)
	}
	if _, err := RunTime(1 << 30); err == nil {
		t.Error("RunTime of a process that does not exist succeeded")
	}
}

// threadTime is the calling thread's own run time.
func threadTime() (time.Duration, error) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, err
	}
	return parseSchedstat(b)
}

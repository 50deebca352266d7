package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParseStatReadsUserPlusSystemTime(t *testing.T) {
	// utime 250 and stime 50 ticks: 3 s. The command name holds a space
	// and a closing parenthesis, as a process may name itself.
	line := "4242 (rm sd) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 7 9 20 0 12 0 100 1000000 500 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("parseStat = %v, want %v (utime+stime, children's times not counted)", got, want)
	}
	for _, bad := range []string{"", "4242 rmsd S 1", "4242 (rmsd) S 1 2 3", "4242 (rmsd) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 50 7"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded, want an error", bad)
		}
	}
}

func TestCPUTimeGrowsWhileThisProcessWorks(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Work until the kernel has charged at least two ticks more.
	deadline := time.Now().Add(time.Minute)
	x := 0
	for {
		for i := range 1_000_000 {
			x += i
		}
		now, err := CPUTime(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now >= before+2*time.Second/ClockTicks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %v (from %v) after a minute of work (%d)", now, before, x)
		}
	}
	if _, err := CPUTime(1 << 30); err == nil {
		t.Error("CPUTime of a process that does not exist succeeded")
	}
}

package procstat

import (
	"os"
	"testing"
)

func TestParseRSSReadsVmRSSInBytes(t *testing.T) {
	status := "Name:\trmsd\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\nThreads:\t12\n"
	got, err := parseRSS([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(123456) << 10; got != want {
		t.Errorf("parseRSS = %d, want %d", got, want)
	}
	for _, bad := range []string{"", "Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if _, err := parseRSS([]byte(bad)); err == nil {
			t.Errorf("parseRSS(%q) succeeded, want an error", bad)
		}
	}
}

func TestRSSOfThisProcessGrowsWithWhatItTouches(t *testing.T) {
	before, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	after, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 32<<20 {
		t.Errorf("RSS grew %d bytes after touching 64 MiB, want at least 32 MiB", after-before)
	}
	_ = held[len(held)-1]
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of a process that does not exist succeeded")
	}
}

func TestResidentSetOfThisProcessSplitsIntoAnonAndFile(t *testing.T) {
	r, err := ResidentSet(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if r.Anon <= 0 || r.File <= 0 || r.Anon+r.File > r.Total {
		t.Errorf("ResidentSet = %+v, want anonymous and file-backed parts within the total", r)
	}
}

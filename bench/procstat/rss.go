package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// RSS is the resident set size of process pid in bytes (VmRSS of
// /proc/<pid>/status).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read the resident set of process %d: %w", pid, err)
	}
	return parseRSS(b)
}

// Resident is a resident set and its two main parts, in bytes: anonymous
// memory (the heap, stacks, the runtime's own) and file-backed pages (the
// binary's text and data, mapped files).
type Resident struct {
	Total, Anon, File int64
}

// ResidentSet reads VmRSS, RssAnon and RssFile of /proc/<pid>/status.
func ResidentSet(pid int) (Resident, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Resident{}, fmt.Errorf("read the resident set of process %d: %w", pid, err)
	}
	var r Resident
	for _, f := range []struct {
		name string
		to   *int64
	}{{"VmRSS", &r.Total}, {"RssAnon", &r.Anon}, {"RssFile", &r.File}} {
		if *f.to, err = parseStatusKB(b, f.name); err != nil {
			return Resident{}, err
		}
	}
	return r, nil
}

// parseRSS finds the VmRSS line (in kB) of a /proc/<pid>/status file.
func parseRSS(b []byte) (int64, error) { return parseStatusKB(b, "VmRSS") }

// parseStatusKB finds the line of field (in kB) of a /proc/<pid>/status
// file, in bytes.
func parseStatusKB(b []byte, field string) (int64, error) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(field+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("%s line %q: want a number of kB", field, line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s line %q: %w", field, line, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line in the process status", field)
}

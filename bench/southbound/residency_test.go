package main

import (
	"os"
	"testing"

	"github.com/rmsd/rmsd/bench/procstat"
)

func TestResidentSamplesMedianIsATakenSampleAndSpanItsRange(t *testing.T) {
	s := residentSamples{
		{Total: 30, Anon: 20, File: 10},
		{Total: 10, Anon: 4, File: 6},
		{Total: 50, Anon: 40, File: 10},
		{Total: 20, Anon: 12, File: 8},
	}
	if got, want := s.median(), (procstat.Resident{Total: 20, Anon: 12, File: 8}); got != want {
		t.Errorf("median of four = %+v, want the lower middle sample %+v", got, want)
	}
	if got, want := s[:3].median(), (procstat.Resident{Total: 30, Anon: 20, File: 10}); got != want {
		t.Errorf("median of three = %+v, want %+v", got, want)
	}
	if lo, hi := s.span(); lo != 10 || hi != 50 {
		t.Errorf("span = %d–%d, want 10–50", lo, hi)
	}
	if got := (residentSamples{}).median(); got != (procstat.Resident{}) {
		t.Errorf("median of none = %+v, want zero", got)
	}
}

func TestResidentSamplesTakeReadsTheProcess(t *testing.T) {
	var s residentSamples
	if err := s.take(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Total <= 0 {
		t.Fatalf("samples after one take = %+v, want one with a resident set", s)
	}
	if err := s.take(-1); err == nil {
		t.Error("take of no process: want an error")
	}
	if len(s) != 1 {
		t.Errorf("a failed take appended a sample: %+v", s)
	}
}

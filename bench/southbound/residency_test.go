package main

import (
	"os"
	"testing"

	"github.com/rmsd/rmsd/bench/procstat"
)

func TestResidentSamplesSummaryIsATakenSampleAndTheRange(t *testing.T) {
	s := residentSamples{
		{Total: 30, Anon: 20, File: 10},
		{Total: 10, Anon: 4, File: 6},
		{Total: 50, Anon: 40, File: 10},
		{Total: 20, Anon: 12, File: 8},
	}
	med, lo, hi := s.summary()
	if want := (procstat.Resident{Total: 30, Anon: 20, File: 10}); med != want {
		t.Errorf("median of four = %+v, want the upper middle sample %+v", med, want)
	}
	if lo != 10 || hi != 50 {
		t.Errorf("range = %d–%d, want 10–50", lo, hi)
	}
	if med, lo, hi := s[1:].summary(); med != (procstat.Resident{Total: 20, Anon: 12, File: 8}) || lo != 10 || hi != 50 {
		t.Errorf("summary of three = %+v, %d–%d, want the middle sample {20 12 8}, 10–50", med, lo, hi)
	}
	if med, lo, hi := (residentSamples{}).summary(); med != (procstat.Resident{}) || lo != 0 || hi != 0 {
		t.Errorf("summary of none = %+v, %d–%d, want zeros", med, lo, hi)
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

package main

import "time"

// options are the harness's knobs.
type options struct {
	duration, warmup, settle time.Duration
	rounds                   int
	concurrency, admissions  uint
	root, rmsd, out          string
	network                  int
	keep                     bool
}

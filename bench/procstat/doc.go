// Package procstat reads what the benchmark harnesses measure of a running
// process from /proc: its CPU time (user plus system, in ticks, or its
// threads' run time to the nanosecond) and its resident set, whole or
// split into anonymous and file-backed pages.
package procstat

// Package procstat reads what the benchmark harnesses measure of a running
// process from /proc: its CPU time (user plus system) and its resident set.
package procstat

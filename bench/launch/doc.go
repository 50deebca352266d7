// Package launch starts, talks to and stops the programs the benchmark
// harnesses measure (rmsd, rmssim, the bare servers and clients): each runs
// as a real process whose output goes to a log file, which dies with the
// harness, and which is ready once a line it prints says so.
//
// It also builds those programs from source (Build) and dials their gRPC
// ports, waiting until health answers SERVING (Dial).
package launch

// Package metrics is rmsd's Prometheus instrumentation: upstream RMS's
// rms_* families (build and configuration info, per-RPC latency histograms,
// workflow counters and in-flight gauges) and rmsd's own rmsd_* families
// (the job registry's index and quarantined jobs, BMC operations, firmware
// download bytes, journal commit latency, southbound request latency and
// errors by protocol and device kind, certificate expiry, the shutdown
// drain's start), the build, job durations, and the standard process_* and
// go_* collectors, on one registry served at /metrics.
//
// It only observes: the job engine, its journal, the gRPC server and the
// hardware clients push into it through cheap callbacks (counters and histogram
// observations), or it reads their atomic counters when scraped. A scrape
// never sends a message to an actor, so it cannot stall the registry. No
// label carries a job, rack or node id.
//
// Lifecycle: New before the job engine starts (its OnJob hook feeds the
// workflow families), Watch once the sources exist, Listen after the gRPC
// listener is bound, Server.Close at shutdown.
package metrics

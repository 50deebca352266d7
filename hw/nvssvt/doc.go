// Package nvssvt runs NVIDIA's system validation tool, NVSSVT, against one
// Device Under Test (DUT) per run and reads its report: the southbound side
// of RackManagerV2.StartSystemValidation.
//
// The upstream notes name the tool but not its command line or report, so
// this package defines both (contract.go, report.go) and the stand-in
// hw/sim/nvssvtsim speaks the same: one executable run per DUT, with
//
//	<nvssvt_path> --dut-id <node id> --bmc <host:port> [--host <host:port>]
//	    --log-dir <dir> --report <dir>/report.json [--config-override <value>]
//
// each argument its own argv element (no shell ever parses them). The
// credentials are never on the command line: they travel in the
// environment (NVSSVT_BMC_USERNAME, NVSSVT_BMC_PASSWORD and, with a host,
// NVSSVT_HOST_USERNAME, NVSSVT_HOST_PASSWORD), which is built from scratch
// for the run (PATH, HOME, TMPDIR and the locale are kept, nothing else of
// rmsd's). The exit status is 0 when every check passed, 1 when the scan
// ran and some check failed, anything else when the tool could not scan.
//
// A Runner bounds what a run may take: at most MaxConcurrent processes at
// once (a scan waits for a slot, cancellable), a run time (the process
// group gets SIGTERM, then SIGKILL after a grace period, and is reaped),
// and the output kept (stdout and stderr each up to MaxOutput bytes, in
// files in the run's log directory; the rest is read and dropped). The
// process starts in its own process group, and whatever of that group is
// still alive when the run ends is killed, so no run leaves a process
// behind.
package nvssvt

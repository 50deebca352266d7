// Command bareclient is the anchor of `task bench:southbound`: a bare
// southbound client that does exactly the hardware requests rmsd does for a
// power-state read, and nothing else (no gRPC, no job engine, no journal).
//
// It loads nodes files (rack_manager.NodeSet in protobuf JSON, as rmssim
// writes them) and then reads commands on stdin, one a line, answering each
// on stdout:
//
//	power RACK   reads the power state of every node of RACK
//	power *      reads every node it loaded (the whole site)
//	firmware RACK FILE POLL_MS
//	             updates the BMC firmware of every compute tray of RACK
//	             with FILE, reading each tray's task every POLL_MS
//	quit         exits
//
// and answers `done <nanoseconds> <ok> <failed>`. It prints `bareclient
// ready <nodes>` once the nodes are loaded.
//
// Per node it issues rmsd's requests (hw/redfish): a compute or switch tray
// is one GET of /redfish/v1/Systems/System_0; a LiteOn power shelf is the
// chassis collection, the power-shelf chassis, its PowerSubsystem, the
// PowerSupplies collection and each PSU. Every request carries Basic auth
// and Accept: application/json over HTTPS/1.1 without certificate
// verification and without TLS session resumption, like rmsd's pool; at
// most -concurrency node reads run at once and each BMC sees one at a time
// (every node has a BMC of its own here).
//
// A firmware update of a compute tray is rmsd's with force_update and no
// activation: the update preconditions (every chassis, firmware inventory
// member and task), the update service, one multipart/form-data push with
// a Content-Length streamed from the file (never held in memory), then the
// task until it ends; every tray of the rack at once.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	nodesFiles := flag.String("nodes", "", "comma-separated nodes files (rack_manager.NodeSet in protobuf JSON)")
	concurrency := flag.Int("concurrency", 256, "node reads in flight at once, as rmsd's [redfish] max_concurrent_requests")
	flag.Parse()
	if err := run(context.Background(), strings.Split(*nodesFiles, ","), *concurrency); err != nil {
		fmt.Fprintf(os.Stderr, "bareclient: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, files []string, concurrency int) error {
	site, err := loadSite(files)
	if err != nil {
		return err
	}
	c := newClient(concurrency)
	defer c.close()
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "bareclient ready %d\n", len(site.nodes))
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 1 && f[0] == "quit":
			return nil
		case len(f) == 2 && f[0] == "power":
			nodes := site.rack(f[1])
			if len(nodes) == 0 {
				fmt.Fprintf(out, "error no nodes in %q\n", f[1])
				break
			}
			r := c.readPower(ctx, nodes)
			fmt.Fprintf(out, "done %d %d %d\n", r.took.Nanoseconds(), r.ok, r.failed)
		case len(f) == 4 && f[0] == "firmware":
			nodes := site.computeTrays(f[1])
			poll, err := strconv.Atoi(f[3])
			if len(nodes) == 0 || err != nil || poll <= 0 {
				fmt.Fprintf(out, "error no compute trays in %q or a bad poll interval %q\n", f[1], f[3])
				break
			}
			r := c.updateFirmware(ctx, nodes, f[2], time.Duration(poll)*time.Millisecond)
			fmt.Fprintf(out, "done %d %d %d\n", r.took.Nanoseconds(), r.ok, r.failed)
		default:
			fmt.Fprintf(out, "error unknown command %q\n", in.Text())
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("read commands: %w", err)
	}
	return nil
}

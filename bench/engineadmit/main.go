// Command engineadmit is the anchor of the southbound harness's admission
// scenario: the job engine's own admission of a firmware batch, in a
// process of its own, measured the way the harness measures rmsd (CPU time
// of the whole process), so that rmsd's BatchUpdateFirmware can be read
// against it: what gRPC, validation and planning add per admitted node.
//
// It builds the engine as rmsd does (actors.New with rmsd's default
// [workflows] bounds, its job journal on a SQLite store of its own, its
// log at info level into a file, as rmsd's stdout is in the harness), and
// each round admits one batch of -nodes children in one CreateBatch, as
// rmsd's batch firmware RPCs do (a parent, one child per node, each with
// its device key). The children's workflows wait at a gate, as rmsd's
// wait for their BMC in the scenario, so a round's CPU time is the
// admission's: the registry turn, the journal commit, the job and lock
// actors and each child's start. Between rounds, untimed, the children are
// released and the engine left to settle.
//
// Per round it prints `round <i> <children> <cpu_ns> <wall_ns>`, then
// `done`. Usage:
//
//	engineadmit [-nodes 1000] [-rounds 3] [-dir /tmp/x]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/bench/procstat"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store/sqlstore"
)

func main() {
	nodes := flag.Int("nodes", 1000, "children per batch")
	rounds := flag.Int("rounds", 3, "batches, one per round")
	dir := flag.String("dir", "", "where the SQLite store goes (a temporary directory when empty)")
	flag.Parse()
	if err := run(context.Background(), *nodes, *rounds, *dir, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "engineadmit: %v\n", err)
		os.Exit(1)
	}
}

// maxTrackedJobs is rmsd's default [workflows] max_tracked_jobs.
const maxTrackedJobs = 10000

func run(ctx context.Context, nodes, rounds int, dir string, out io.Writer) error {
	if nodes < 1 || rounds < 1 || nodes+1 > maxTrackedJobs {
		return fmt.Errorf("-nodes %d, -rounds %d: want 1 to %d nodes and a round or more", nodes, rounds, maxTrackedJobs-1)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "engineadmit-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "engine.db"), sqlstore.Options{})
	if err != nil {
		return fmt.Errorf("open the journal's store: %w", err)
	}
	defer st.Close()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	defer sys.Shutdown()
	logFile, err := os.Create(filepath.Join(dir, "engine.log"))
	if err != nil {
		return fmt.Errorf("open the engine's log: %w", err)
	}
	defer logFile.Close()
	// rmsd's engine logs at info, as JSON lines with a timestamp, to
	// rmsd's stdout (a file in the harness): a line per job admitted.
	log := zerolog.New(logFile).Level(zerolog.InfoLevel).With().Timestamp().Str("component", "jobs").Logger()
	e, err := actors.New(sys, actors.Options{MaxTrackedJobs: maxTrackedJobs, Journal: st, Logger: log})
	if err != nil {
		return fmt.Errorf("start the job engine: %w", err)
	}
	defer e.Close()
	for round := range rounds {
		cpu, wall, ids, release, err := admit(ctx, e, nodes, round)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "round %d %d %d %d\n", round, len(ids), cpu.Nanoseconds(), wall.Nanoseconds())
		release()
		if err := e.Wait(ctx, ids...); err != nil {
			return fmt.Errorf("round %d: wait for the children: %w", round, err)
		}
	}
	fmt.Fprintln(out, "done")
	return nil
}

// admit admits one batch whose children wait at a gate, and returns the
// process's CPU time and the wall time from the call until every child
// has reached the gate, the children's ids and the gate's release.
func admit(ctx context.Context, e *actors.Engine, nodes, round int) (cpu, wall time.Duration, ids []string, release func(), err error) {
	gate, arrived := make(chan struct{}), make(chan struct{})
	var waiting atomic.Int64
	held := messages.WorkflowFunc(func(wctx context.Context, job messages.Reporter) {
		if waiting.Add(1) == int64(nodes) {
			close(arrived)
		}
		select {
		case <-gate:
		case <-wctx.Done():
		}
		_ = job.Complete("Completed", `{"status":"completed"}`)
	})
	targets := make([]messages.BatchTarget, nodes)
	for i := range targets {
		rack := "rack-" + strconv.Itoa(round) + "-" + strconv.Itoa(i/18)
		targets[i] = messages.BatchTarget{RackID: rack, NodeID: rack + "-compute-" + strconv.Itoa(i%18), Description: "Queued",
			Devices: []string{fmt.Sprintf("bmc:127.%d.%d.%d:443", 240+round%10, i>>8, i&255)}, Workflow: held}
	}
	cpu0, err := procstat.RunTime(os.Getpid())
	if err != nil {
		return 0, 0, nil, nil, err
	}
	start := time.Now()
	rep, err := e.CreateBatch(ctx, messages.JobSpec{ID: fmt.Sprintf("batch-%d", round), Type: messages.TypeFirmwareUpdate}, targets, nil)
	if err != nil {
		close(gate)
		return 0, 0, nil, nil, fmt.Errorf("round %d: CreateBatch: %w", round, err)
	}
	if len(rep.Admitted) == nodes {
		select {
		case <-arrived:
		case <-time.After(time.Minute):
			close(gate)
			return 0, 0, nil, nil, fmt.Errorf("round %d: %d of %d children started within a minute", round, waiting.Load(), nodes)
		}
	}
	wall = time.Since(start)
	cpu1, cerr := procstat.RunTime(os.Getpid())
	if cerr != nil {
		close(gate)
		return 0, 0, nil, nil, cerr
	}
	if len(rep.Admitted) != nodes {
		close(gate)
		return 0, 0, nil, nil, fmt.Errorf("round %d: %d of %d children admitted", round, len(rep.Admitted), nodes)
	}
	for _, a := range rep.Admitted {
		ids = append(ids, a.ID)
	}
	return cpu1 - cpu0, wall, ids, func() { close(gate) }, nil
}

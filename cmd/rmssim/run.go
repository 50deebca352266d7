package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/simrack"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
)

// run starts the simulator, calls ready with its nodes once the nodes file
// is written, and serves until ctx ends. It returns the exit code.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, ready func([]hw.Node)) int {
	fs := flag.NewFlagSet("rmssim", flag.ContinueOnError)
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: rmssim [--config PATH]\n\n"+
			"rmssim runs simulated GB200 NVL72 racks until SIGINT or SIGTERM and writes their nodes\n"+
			"to [simulator] nodes_file.\n\n")
		fs.PrintDefaults()
	}
	path := fs.String("config", config.DefaultPath, "path of the TOML configuration file ([simulator] and [logging] are used)")
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(usage.Bytes())
		return 0
	case err != nil:
		_, _ = stderr.Write(usage.Bytes())
		return 2
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "config" })

	cfg, err := config.Load(config.Source{Path: *path, Explicit: explicit, Environ: environ})
	if err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	log, err := logging.New(cfg.Logging, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	fleet, err := simrack.Start(ctx, cfg.Simulator, log.Component("simulator"))
	if err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	defer fleet.Close()
	rel, err := simrack.StartRelease()
	if err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	defer rel.Close()
	nodes := simrack.Nodes(fleet)
	// Every simulated device listens by now: a start that failed on a port
	// in use has returned above and left a running simulator's file alone.
	if err := simrack.WriteNodesFile(cfg.Simulator.NodesFile, nodes); err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	releaseFile := simrack.ReleaseFile(cfg.Simulator.ReleaseFile, cfg.Simulator.NodesFile)
	if err := simrack.WriteReleaseFile(releaseFile, rel.Release); err != nil {
		fmt.Fprintf(stderr, "rmssim: %v\n", err)
		return 1
	}
	log.Info().Int("racks", cfg.Simulator.Racks).Int("nodes", len(nodes)).
		Str("nodes_file", cfg.Simulator.NodesFile).Str("release_file", releaseFile).Str("release", rel.Release.ID).
		Float64("time_scale", cfg.Simulator.TimeScale).
		Msg("simulator running")
	if ready != nil {
		ready(nodes)
	}
	<-ctx.Done()
	log.Info().Msg("simulator stopping")
	return 0
}

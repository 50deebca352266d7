package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/simrack"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/sim"
)

// runOptions are the process's inputs, injected so tests can run the daemon
// in-process.
type runOptions struct {
	Args    []string
	Environ []string
	Stdout  io.Writer
	Stderr  io.Writer
	// Ready, when set, is called with the gRPC address once it accepts
	// connections.
	Ready func(addr net.Addr)
}

// run starts the daemon and blocks until ctx is cancelled, then shuts down
// gracefully. It returns the process exit code.
func run(ctx context.Context, opts runOptions) int {
	d, err := start(opts)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "rmsd: %v\n", err)
		return 1
	}
	if err := d.wait(ctx); err != nil {
		d.log.Error().Err(err).Msg("rmsd stopped with an error")
		return 1
	}
	return 0
}

// daemon is a started rmsd: its listener, server, job engine and, with
// --simulate, the simulated racks it manages.
type daemon struct {
	cfg    *config.Config
	log    zerolog.Logger
	lis    net.Listener
	server *rmsserver.Server
	engine jobEngine
	hw     *hardware
	fleet  *sim.Fleet
	served chan error
}

// flags are rmsd's command-line flags.
type flags struct {
	configPath string
	explicit   bool // --config was given
	simulate   bool
}

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	fs := flag.NewFlagSet("rmsd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f flags
	fs.StringVar(&f.configPath, "config", config.DefaultPath, "path of the TOML configuration file")
	fs.BoolVar(&f.simulate, "simulate", false,
		"manage a built-in simulated rack ([simulator] section) and serve plaintext gRPC on loopback")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	fs.Visit(func(fl *flag.Flag) { f.explicit = f.explicit || fl.Name == "config" })
	return f, nil
}

func start(opts runOptions) (*daemon, error) {
	f, err := parseFlags(opts.Args, opts.Stderr)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.Source{Path: f.configPath, Explicit: f.explicit, Environ: opts.Environ})
	if err != nil {
		return nil, err
	}
	logger, err := logging.New(cfg.Logging, opts.Stdout)
	if err != nil {
		return nil, err
	}
	serverOpts, transport, err := transportOptions(cfg, f.simulate, opts.Environ, logger)
	if err != nil {
		return nil, err
	}
	registry := racks.New(profileNames(cfg.Workflows.ExpectedInventoryProfiles))

	d := &daemon{cfg: cfg, log: logger.Logger, served: make(chan error, 1)}
	if f.simulate {
		if d.fleet, err = startSimulation(cfg, registry, logger); err != nil {
			return nil, err
		}
	}
	if d.hw, err = newHardware(cfg, logger); err != nil {
		d.closeHardware()
		return nil, err
	}
	if d.engine, err = startEngine(cfg, logger); err != nil {
		d.closeHardware()
		return nil, fmt.Errorf("start job engine: %w", err)
	}
	addr := net.JoinHostPort(cfg.Server.BindAddress, strconv.Itoa(cfg.Port))
	if d.lis, err = net.Listen("tcp", addr); err != nil {
		drainNow(d.engine)
		d.closeHardware()
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}

	version := buildinfo.Version()
	serverOpts.Logger = logger.Component("grpc")
	serverOpts.Deps = rmsserver.Deps{
		Version: version, Jobs: d.engine.Jobs(), Starter: d.engine.Starter(),
		Racks: registry, Nodes: d.hw.runner, SwitchNVUE: d.hw.nvue,
	}
	d.server = rmsserver.New(serverOpts)
	go func() { d.served <- d.server.Serve(d.lis) }()
	d.log.Info().Str("addr", d.lis.Addr().String()).Str("version", version).
		Str("transport", transport).Msg("rmsd serving")
	if opts.Ready != nil {
		opts.Ready(d.lis.Addr())
	}
	return d, nil
}

// transportOptions applies the transport gate: mTLS, or plaintext with both
// insecure switches, or plaintext on loopback for a simulation.
func transportOptions(cfg *config.Config, simulate bool, environ []string, log logging.Logger) (rmsserver.Options, string, error) {
	var opts rmsserver.Options
	if simulate {
		cfg.Server.BindAddress = "127.0.0.1"
		log.Warn().Msg("SIMULATION: managing simulated racks only; serving plaintext gRPC on loopback without authentication")
		return opts, "plaintext (simulation)", nil
	}
	transport, err := cfg.TLS.ChooseTransport(environ)
	if err != nil {
		return opts, "", err
	}
	if transport == config.TransportMTLS {
		opts.TLS, err = rmsserver.MTLSConfig(cfg.TLS.Cert, cfg.TLS.Key, cfg.TLS.CA)
		return opts, transport.String(), err
	}
	log.Warn().Msg("serving plaintext gRPC without authentication ([tls] insecure and RMS_ALLOW_INSECURE=1): development only")
	return opts, transport.String(), nil
}

// startSimulation starts the simulated racks, registers their nodes as
// CreateNodes would, writes the inventory to [simulator] nodes_file and
// points [switches] nvue_port at the simulated NVOS hosts, so switches
// given with host port 0 or 22 (as callers send them) reach them.
func startSimulation(cfg *config.Config, registry *racks.Registry, log logging.Logger) (*sim.Fleet, error) {
	fleet, err := simrack.Start(context.Background(), cfg.Simulator, log.Component("simulator"))
	if err != nil {
		return nil, err
	}
	if port := fleet.NVUEPort(); port != 0 {
		cfg.Switches.NVUEPort = port
	}
	nodes := simrack.Nodes(fleet)
	for i, err := range registry.Create(nodes) {
		if err != nil {
			fleet.Close()
			return nil, fmt.Errorf("register simulated node %s: %w", nodes[i].ID, err)
		}
	}
	if err := simrack.WriteNodesFile(cfg.Simulator.NodesFile, nodes); err != nil {
		fleet.Close()
		return nil, err
	}
	log.Info().Int("racks", cfg.Simulator.Racks).Int("nodes", len(nodes)).
		Str("nodes_file", cfg.Simulator.NodesFile).Msg("simulated racks registered")
	return fleet, nil
}

// closeHardware closes the simulated racks and the southbound clients,
// those that were started.
func (d *daemon) closeHardware() {
	if d.fleet != nil {
		d.fleet.Close()
	}
	if d.hw != nil {
		d.hw.Close()
	}
}

// wait serves until ctx ends or the server fails, then shuts down: health
// NOT_SERVING, no new jobs, in-flight RPCs finish within the grace period,
// running jobs are cancelled and awaited within the drain timeout.
func (d *daemon) wait(ctx context.Context) error {
	var serveErr error
	select {
	case <-ctx.Done():
		d.log.Info().Msg("shutdown requested: draining")
	case serveErr = <-d.served:
		d.log.Error().Err(serveErr).Msg("gRPC server stopped unexpectedly")
	}

	d.engine.BeginShutdown()
	grace, cancel := context.WithTimeout(context.Background(), seconds(d.cfg.Server.ShutdownGraceSeconds))
	d.server.Shutdown(grace)
	cancel()
	if serveErr == nil {
		serveErr = <-d.served
	}

	drain, cancel := context.WithTimeout(context.Background(), seconds(d.cfg.Workflows.DrainTimeoutSeconds))
	defer cancel()
	drainErr := d.engine.Drain(drain)
	if drainErr != nil {
		drainErr = fmt.Errorf("drain jobs: %w", drainErr)
	}
	d.closeHardware()
	d.log.Info().Msg("rmsd stopped")
	return errors.Join(serveErr, drainErr)
}

// drainNow stops an engine that never served.
func drainNow(e jobEngine) {
	e.BeginShutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.Drain(ctx)
}

// profileNames lists the configured expected-inventory profiles.
func profileNames(profiles map[string]config.InventoryProfile) []string {
	names := make([]string, 0, len(profiles))
	for name := range profiles {
		names = append(names, name)
	}
	return names
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

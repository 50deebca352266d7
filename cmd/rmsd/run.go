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
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw/racks"
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

// daemon is a started rmsd: its listener, server and job engine.
type daemon struct {
	cfg    *config.Config
	log    zerolog.Logger
	lis    net.Listener
	server *rmsserver.Server
	engine jobEngine
	served chan error
}

func start(opts runOptions) (*daemon, error) {
	fs := flag.NewFlagSet("rmsd", flag.ContinueOnError)
	fs.SetOutput(opts.Stderr)
	configPath := fs.String("config", config.DefaultPath, "path of the TOML configuration file")
	if err := fs.Parse(opts.Args); err != nil {
		return nil, err
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "config" })

	cfg, err := config.Load(config.Source{Path: *configPath, Explicit: explicit, Environ: opts.Environ})
	if err != nil {
		return nil, err
	}
	logger, err := logging.New(cfg.Logging, opts.Stdout)
	if err != nil {
		return nil, err
	}
	transport, err := cfg.TLS.ChooseTransport(opts.Environ)
	if err != nil {
		return nil, err
	}
	var serverOpts rmsserver.Options
	if transport == config.TransportMTLS {
		if serverOpts.TLS, err = rmsserver.MTLSConfig(cfg.TLS.Cert, cfg.TLS.Key, cfg.TLS.CA); err != nil {
			return nil, err
		}
	} else {
		logger.Warn().Msg("serving plaintext gRPC without authentication ([tls] insecure and RMS_ALLOW_INSECURE=1): development only")
	}

	engine, err := startEngine(cfg, logger.Component("jobs"))
	if err != nil {
		return nil, fmt.Errorf("start job engine: %w", err)
	}
	addr := net.JoinHostPort(cfg.Server.BindAddress, strconv.Itoa(cfg.Port))
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		drainNow(engine)
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}

	version := buildinfo.Version()
	serverOpts.Logger = logger.Component("grpc")
	serverOpts.Deps = rmsserver.Deps{
		Version: version,
		Jobs:    engine.Jobs(),
		Racks:   racks.New(profileNames(cfg.Workflows.ExpectedInventoryProfiles)),
	}
	d := &daemon{
		cfg:    cfg,
		log:    logger.Logger,
		lis:    lis,
		server: rmsserver.New(serverOpts),
		engine: engine,
		served: make(chan error, 1),
	}
	go func() { d.served <- d.server.Serve(lis) }()
	d.log.Info().Str("addr", lis.Addr().String()).Str("version", version).
		Str("transport", transport.String()).Msg("rmsd serving")
	if opts.Ready != nil {
		opts.Ready(lis.Addr())
	}
	return d, nil
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

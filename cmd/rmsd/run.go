package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/metrics"
	"github.com/rmsd/rmsd/cmd/internal/simrack"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/grpc/opsserver"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/store"
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
	// After waits out the drain delay; nil means time.After.
	After func(time.Duration) <-chan time.Time
	// ConsoleAuthorize is asked before every web console request; nil
	// asks the [authz] policy for the read permission (everyone who
	// reached the listener without [authz]).
	ConsoleAuthorize func(r *http.Request) error
}

// run starts the daemon and blocks until ctx is cancelled, then shuts down
// gracefully. It returns the process exit code.
func run(ctx context.Context, opts runOptions) int {
	d, err := start(ctx, opts)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errVersion) {
		return 0
	}
	if errors.As(err, new(usageError)) {
		return 2 // parseFlags has explained it on stderr
	}
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

// daemon is a started rmsd: its store, firmware catalog, listener, server,
// job engine and, with --simulate, the simulated racks it manages.
type daemon struct {
	cfg     *config.Config
	log     zerolog.Logger
	after   func(time.Duration) <-chan time.Time
	store   store.Store
	catalog *firmwareCatalog
	lis     net.Listener
	server  *rmsserver.Server
	engine  jobEngine
	admin   *adminService
	audit   *auditLog
	metrics *metrics.Metrics
	// metricsSrv serves metrics once every other listener is bound.
	metricsSrv *metrics.Server
	hw         *hardware
	// power is the last-known power view the console shows; nil without
	// a console.
	power *powerview.View
	// console is the web console, nil when it is not served.
	console *consoleService
	// consoleAuthorize is runOptions.ConsoleAuthorize.
	consoleAuthorize func(r *http.Request) error
	fleet            *sim.Fleet
	release          *simrack.Release
	served           chan error
	// member, with [cluster] enabled, is this rmsd's membership of the
	// cluster and the racks it owns (member.go); nil otherwise.
	member *memberDaemon
}

// start brings the daemon up (configuration, logging, the store, the
// metrics, the firmware catalog, hardware clients, the simulation, the job
// engine, the listeners (gRPC, admin, metrics), the nodes file)
// and serves. On failure it closes whatever it had started. ctx bounds the
// start only. With [cluster] enabled it also joins the cluster, whose
// members run the racks' jobs (member.go).
func start(ctx context.Context, opts runOptions) (_ *daemon, err error) {
	f, err := parseFlags(opts.Args, opts.Stdout, opts.Stderr)
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
	gogc, fromEnv := applyGCPercent(cfg.Server, opts.Environ)
	logger.Debug().Str("gogc", gogc).Bool("from_environment", fromEnv).Msg("garbage collector target")
	if err := checkCluster(cfg, f.simulate); err != nil {
		return nil, err
	}
	serverOpts, transport, err := transportOptions(cfg, f.simulate, opts.Environ, logger)
	if err != nil {
		return nil, err
	}
	if serverOpts.Authorizer, err = authorizer(cfg.Authz, serverOpts.TLS != nil, logger); err != nil {
		return nil, err
	}
	registry := racks.New(profileNames(cfg.Workflows.ExpectedInventoryProfiles))

	d := &daemon{cfg: cfg, log: logger.Logger, after: opts.After, served: make(chan error, 1), consoleAuthorize: opts.ConsoleAuthorize}
	if d.consoleAuthorize == nil {
		d.consoleAuthorize = consoleAuthorizer(serverOpts.Authorizer)
	}
	if d.after == nil {
		d.after = time.After
	}
	defer func() {
		if err != nil {
			d.abandon()
		}
	}()
	if d.store, err = openStore(ctx, cfg, opts.Environ, logger.Component("store")); err != nil {
		return nil, err
	}
	d.metrics = newMetrics(cfg, serverOpts.TLS != nil, d.store.Info().Engine)
	if serverOpts.TLS != nil {
		if err = recordServerCertificates(d.metrics, cfg.TLS); err != nil {
			return nil, err
		}
	}
	if d.catalog, err = openCatalog(ctx, cfg.Workflows, catalogMember(cfg.Cluster), catalogClaimAfter(cfg.Cluster), d.store, logger); err != nil {
		return nil, err
	}
	// The simulation first: it fixes [switches] nvue_port and ssh_port,
	// which the hardware clients take.
	var simNodes []hw.Node
	var simTLS *simSwitchTLS
	if f.simulate {
		if d.fleet, simNodes, err = startSimulation(cfg, registry, logger); err != nil {
			return nil, err
		}
		if simTLS, err = simulatedSwitchTLS(cfg, d.fleet); err != nil {
			return nil, err
		}
		if d.release, err = simrack.StartRelease(); err != nil {
			return nil, err
		}
	}
	// After the simulation's own nodes, which are not persisted.
	var nodes *nodeStore
	if nodes, err = loadNodes(ctx, cfg.Storage, d.store, registry, logger.Component("nodes")); err != nil {
		return nil, err
	}
	var simIdentity *switchIdentity
	if simTLS != nil {
		simIdentity = simTLS.identity
	}
	var powerSeen platform.PowerSeen
	if cfg.Console.Serves(f.simulate) {
		d.power = powerview.New(nil)
		powerSeen = d.power.Seen
	}
	if d.hw, err = newHardware(cfg, paceFor(f.simulate, cfg.Simulator.TimeScale, cfg.Workflows.PollScale), logger, simIdentity, d.metrics, powerSeen); err != nil {
		return nil, err
	}
	validation, err := validationRunner(cfg.Workflows, f.simulate, logger)
	if err != nil {
		return nil, err
	}
	// In cluster mode the daemon's own engine has no journal and runs no
	// rack's job: each rack's engine runs on its owner (rack.go).
	var journal store.Journal = d.store
	if cfg.Cluster.Enabled {
		journal = nil
	}
	if d.engine, err = startEngine(cfg, logger, d.metrics.ObserveJob, d.metrics.ObserveCommit, journal); err != nil {
		return nil, fmt.Errorf("start job engine: %w", err)
	}
	addr := net.JoinHostPort(cfg.Server.BindAddress, strconv.Itoa(cfg.Port))
	if d.lis, err = net.Listen("tcp", addr); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if d.audit, err = startAudit(cfg.Audit, d.store, logger, opts.Stdout, opts.Stderr); err != nil {
		return nil, err
	}
	// In cluster mode the admin service acts on the engines of the racks
	// this member owns (rackadmin.go).
	adminEngine := d.engine.Admin()
	var racksAdmin *rackAdmin
	if cfg.Cluster.Enabled && cfg.Admin.Enabled {
		racksAdmin = newRackAdmin()
		adminEngine = racksAdmin
	}
	if d.admin, err = startAdmin(cfg.Admin, adminEngine, logger, d.audit.adminInterceptor()...); err != nil {
		return nil, err
	}
	d.metrics.Watch(metrics.Sources{Jobs: d.engine.Load, BMC: d.hw.runner.Load, DownloadBytes: d.catalog.dl.BytesReceived,
		RegistryMailbox: d.engine.RegistryMailboxDepth, QuarantinedJobs: d.engine.QuarantinedJobs, AuditDropped: d.audit.dropped})
	if d.fleet != nil {
		d.metrics.WatchSimulator(d.fleet.Overlaps)
	}
	var consoleRoutes []metrics.Route
	if d.power != nil {
		if consoleRoutes, err = d.startConsole(registry, serverOpts.TLS, logger); err != nil {
			return nil, err
		}
	}
	if err = d.startMetrics(logger, consoleRoutes...); err != nil {
		return nil, err
	}
	// Only with every listener bound may the nodes file change: a start that
	// fails (a port in use) must leave a running daemon's file alone.
	if f.simulate {
		if err = publishSimulation(cfg.Simulator, simNodes, d.release, simTLS, logger); err != nil {
			return nil, err
		}
	}

	version := buildinfo.Version()
	serverOpts.Logger = logger.Component("grpc")
	serverOpts.ObserveRPC = d.metrics.ObserveRPC
	// The lead adds authorization after the audit interceptor, so that
	// the audit log records its refusals.
	serverOpts.Interceptors = d.audit.interceptor()
	ops := opsserver.New(d.audit.auditStore(), d.engine.Listing())
	serverOpts.Services = []rmsserver.Service{{Desc: &opspb.Ops_ServiceDesc, Impl: ops}}
	serverOpts.Deps = rmsserver.Deps{
		Version: version, Jobs: d.engine.Jobs(),
		Racks: registry, Nodes: d.hw.runner,
		Catalog: d.catalog.svc, FirmwareDir: cfg.Workflows.FirmwareDir,
		FirmwareTiming:    d.hw.firmware,
		NICFlasher:        d.hw.nic,
		FlintProfiles:     flintProfiles(cfg.Workflows.ExpectedInventoryProfiles),
		SwitchAdminTiming: d.hw.switchAdmin,
		SwitchImageTiming: d.hw.switchImage,
		DrainWindow:       seconds(cfg.Workflows.DrainTimeoutSeconds),
		MaxBatchNodes:     cfg.Workflows.MaxBatchNodes,
		SwitchCert: rmsserver.SwitchCertConfig{CertRoot: cfg.Switches.SwitchCertRoot,
			DefaultDomain: cfg.Switches.DefaultSwitchDomain, Insecure: cfg.Switches.InsecureSwitch},
		InventoryProfiles: profileAPs(cfg.Workflows.ExpectedInventoryProfiles),
		Fabric:            &d.hw.fabric,
		Validation:        validation,
	}
	if cfg.Cluster.Enabled {
		if d.member, err = joinCluster(cfg, d.store, nodes, serverOpts.Deps, logger, d.metrics.ObserveJob, d.metrics.ObserveCommit, racksAdmin); err != nil {
			return nil, err
		}
		// A rack's jobs run on its owner only: calls for a rack go there,
		// and this server's own handlers admit none.
		serverOpts.Deps.Jobs = nil
		d.startSiteJobs()
		if serverOpts.Inner, err = d.member.interceptor(d.store, logger); err != nil {
			return nil, err
		}
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

// abandon closes what a failed start had started, last first.
func (d *daemon) abandon() {
	d.stopConsole()
	d.stopMetrics()
	d.admin.stop()
	d.audit.close()
	d.member.stop()
	if d.lis != nil {
		_ = d.lis.Close()
	}
	if d.engine != nil {
		drainNow(d.engine)
	}
	if d.hw != nil {
		d.closeHardware()
	}
	d.catalog.Close()
	_ = d.closeStore() // the start's own error is the one reported
}

// closeHardware closes the simulated racks and the southbound clients,
// those that were started.
func (d *daemon) closeHardware() {
	d.release.Close()
	if d.fleet != nil {
		d.fleet.Close()
	}
	if d.hw != nil {
		d.hw.Close()
	}
}

// profileAPs maps each expected-inventory profile to the firmware
// inventory ids it requires.
func profileAPs(profiles map[string]config.InventoryProfile) map[string][]string {
	out := make(map[string][]string, len(profiles))
	for name, p := range profiles {
		out[name] = p.APNames
	}
	return out
}

// flintProfiles keeps the flint_devices counts of the inventory profiles
// that have them, keyed by the RMS family (cx7 is CX7, bf3_nic BF3_NIC).
func flintProfiles(profiles map[string]config.InventoryProfile) map[string]nicflash.Counts {
	out := map[string]nicflash.Counts{}
	for name, p := range profiles {
		if len(p.FlintDevices) == 0 {
			continue
		}
		c := nicflash.Counts{}
		for key, n := range p.FlintDevices {
			if fam, ok := nicflash.FamilyOf(key); ok {
				c[fam] = n
			}
		}
		out[name] = c
	}
	return out
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

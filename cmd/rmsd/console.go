package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/metrics"
	"github.com/rmsd/rmsd/console"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/sitejobs"
)

// consoleReadTimeout bounds one background power read of the console's
// refresher.
const consoleReadTimeout = 10 * time.Second

// consoleService is the web console with its listener (when it has a port
// of its own) and its power refresher.
type consoleService struct {
	console *console.Console
	// srv, lis and served are the console's own listener, nil when it
	// shares the metrics listener.
	srv    *http.Server
	lis    net.Listener
	served chan struct{}
	// stopRefresh ends the refresher and the firmware job follower;
	// refreshed is done when both have ended.
	stopRefresh context.CancelFunc
	refreshed   sync.WaitGroup
	// site is the whole site's jobs in cluster mode (nil otherwise).
	site *sitejobs.Site
}

// startConsole builds the console and its power refresher. With [console]
// port 0 it returns the routes the metrics listener serves it on; else it
// serves it on a listener of its own, with mTLS when grpcTLS is set (the
// gRPC API's own configuration: the same CA signs the browsers' client
// certificates).
func (d *daemon) startConsole(registry *racks.Registry, grpcTLS *tls.Config, logger logging.Logger) ([]metrics.Route, error) {
	log := logger.Component("console")
	var jobs console.Jobs = d.engine.Engine()
	var site *sitejobs.Site
	if d.cfg.Cluster.Enabled {
		// In cluster mode this member's own engine runs no rack's job:
		// the console reads every rack's owner (sitejobs), following
		// their changes once the member has joined (startSiteJobs).
		st, ok := d.store.(sitejobs.Store)
		if !ok {
			return nil, fmt.Errorf("console: the %s store keeps no job racks", d.store.Info().Engine)
		}
		site = sitejobs.New(sitejobs.Config{Store: st, Log: log})
		jobs = site
	}
	c, err := console.New(console.Deps{
		Jobs: jobs, Racks: registry, Power: d.power, Catalog: d.catalog.svc,
		Authorize: d.consoleAuthorize, Version: buildinfo.Version(), Log: log,
	})
	if err != nil {
		return nil, err
	}
	s := &consoleService{console: c, site: site}
	d.console = s
	s.startRefresher(d, registry, seconds(d.cfg.Console.PowerRefreshSeconds), log)
	if d.cfg.Console.Port == 0 {
		d.log.Info().Str("path", console.Prefix).Msg("console serving on the metrics listener")
		return []metrics.Route{{Pattern: console.Prefix, Handler: c}, {Pattern: "GET /console", Handler: c}}, nil
	}
	addr := net.JoinHostPort(d.cfg.Server.BindAddress, strconv.Itoa(d.cfg.Console.Port))
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("console: listen on %s: %w", addr, err)
	}
	if grpcTLS != nil {
		cfg := grpcTLS.Clone()
		cfg.NextProtos = []string{"h2", "http/1.1"}
		lis = tls.NewListener(lis, cfg)
	}
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, c)
	mux.Handle("GET /console", c)
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	s.lis, s.served = lis, make(chan struct{})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("console listener stopped")
		}
	}()
	d.log.Info().Str("addr", lis.Addr().String()).Bool("mtls", grpcTLS != nil).Msg("console serving")
	return nil, nil
}

// startRefresher reads the power state of every registered node a job
// does not hold, one node at a time, a round every `every` (none when 0),
// and each node's firmware inventory and slot once; and it reads a node's
// firmware inventory again as soon as a firmware job on it ends, as the
// job engine's feed tells (console.FirmwareJobs), so the rack page shows
// the versions the job left.
func (s *consoleService) startRefresher(d *daemon, registry *racks.Registry, every time.Duration, log zerolog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopRefresh = cancel
	engine, view, runner := d.engine.Engine(), d.power, d.hw.runner
	stale := powerview.NewStale(0)
	r := powerview.Refresher{Every: every, Timeout: consoleReadTimeout, Nodes: registry.Nodes, Stale: stale,
		Skip: func(ctx context.Context) func(hw.Node) bool {
			holds, err := engine.Holds(ctx)
			if err != nil {
				return func(hw.Node) bool { return true } // no registry, no reads
			}
			held := map[hw.Ref]bool{}
			for _, h := range holds {
				held[hw.Ref{RackID: h.RackID, NodeID: h.NodeID}] = true
				if h.NodeID == "" { // a rack's power domain: the whole rack is busy
					held[hw.Ref{RackID: h.RackID}] = true
				}
			}
			return func(n hw.Node) bool { return held[n.Ref()] || held[hw.Ref{RackID: n.RackID}] }
		},
		Read: func(ctx context.Context, n hw.Node) error {
			return runner.One(ctx, n, func(ctx context.Context, _ int, dev platform.Device) error {
				if _, err := dev.PowerState(ctx); err != nil {
					return err
				}
				return readOnce(ctx, view, n, dev)
			})
		},
		ReadFirmware: func(ctx context.Context, n hw.Node) error {
			err := runner.One(ctx, n, func(ctx context.Context, _ int, dev platform.Device) error {
				fw, err := dev.FirmwareInventory(ctx)
				if err != nil {
					return err
				}
				view.SetFirmware(n.RackID, n.ID, fw)
				return nil
			})
			if err != nil {
				log.Warn().Err(err).Str("rack_id", n.RackID).Str("node_id", n.ID).
					Msg("console could not read a node's firmware after its firmware job; it shows the versions read before")
			}
			return err
		}}
	follow := console.FirmwareJobs{Jobs: engine, Log: log, Ended: func(ref hw.Ref) {
		if n, err := registry.Node(ref.RackID, ref.NodeID); err == nil { // a node deleted since is not read
			stale.Mark(n)
		}
	}}
	following := follow.Start(ctx)
	s.refreshed.Go(func() { <-following })
	s.refreshed.Go(func() { r.Run(ctx) })
}

// readOnce reads a node's slot and firmware inventory the first time its
// power read succeeds.
func readOnce(ctx context.Context, view *powerview.View, n hw.Node, dev platform.Device) error {
	e, _ := view.Get(n.RackID, n.ID)
	if e.Slot == 0 && n.Type.Kind() != hw.KindPowerShelf {
		if info, err := dev.DeviceInfo(ctx); err == nil && info.SlotNumber != nil {
			view.SetSlot(n.RackID, n.ID, *info.SlotNumber)
		}
	}
	if e.Firmware == nil {
		fw, err := dev.FirmwareInventory(ctx)
		if err != nil {
			return err
		}
		view.SetFirmware(n.RackID, n.ID, fw)
	}
	return nil
}

// consoleCloseTimeout bounds the requests a shutdown lets finish.
const consoleCloseTimeout = 5 * time.Second

// stopConsole ends the event streams, the refresher and the console's own
// listener, those started.
func (d *daemon) stopConsole() {
	s := d.console
	if s == nil {
		return
	}
	s.console.Close()
	if s.site != nil {
		s.site.Close()
	}
	if s.stopRefresh != nil {
		s.stopRefresh()
		s.refreshed.Wait()
	}
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), consoleCloseTimeout)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		<-s.served
	}
	d.console = nil
}

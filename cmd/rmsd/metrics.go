package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/buildinfo"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/metrics"
	"github.com/rmsd/rmsd/config"
)

// newMetrics builds the daemon's metrics from its configuration, its
// transport and its store engine.
func newMetrics(cfg *config.Config, mtls bool, persistence string) *metrics.Metrics {
	b := buildinfo.Read()
	mode := "insecure"
	if mtls {
		mode = "mTLS"
	}
	return metrics.New(metrics.Info{
		BuildVersion: b.Version, BuildDate: b.Date, GitSHA: b.Revision, GoVersion: b.GoVersion,
		TLSMode: mode, PersistenceType: persistence, GRPCPort: cfg.Port, FirmwareDir: cfg.Workflows.FirmwareDir,
	})
}

// startMetrics serves /metrics on [server] bind_address and [metrics] port
// (0 picks a free port), with the gRPC certificate when [metrics] tls, and
// /debug/pprof/ beside it when [metrics] pprof.
func (d *daemon) startMetrics(log logging.Logger, extra ...metrics.Route) error {
	var tlsConfig *tls.Config
	if d.cfg.Metrics.TLS {
		cert, err := tls.LoadX509KeyPair(d.cfg.TLS.Cert, d.cfg.TLS.Key)
		if err != nil {
			return fmt.Errorf("metrics: load the gRPC certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if err := recordCertificate(d.metrics, "metrics", d.cfg.TLS.Cert); err != nil {
			return err
		}
	}
	if d.cfg.Metrics.Pprof {
		extra = append(extra, metrics.ProfileRoutes()...)
	}
	addr := net.JoinHostPort(d.cfg.Server.BindAddress, strconv.Itoa(d.cfg.Metrics.Port))
	srv, err := metrics.Listen(addr, tlsConfig, d.metrics.Handler(), log.Component("metrics"), extra...)
	if err != nil {
		return err
	}
	d.metricsSrv = srv
	d.log.Info().Str("addr", srv.Addr().String()).Bool("tls", tlsConfig != nil).Bool("pprof", d.cfg.Metrics.Pprof).Msg("metrics serving")
	return nil
}

// metricsCloseTimeout bounds the scrapes a shutdown lets finish.
const metricsCloseTimeout = 5 * time.Second

// stopMetrics closes the metrics listener, those started.
func (d *daemon) stopMetrics() {
	ctx, cancel := context.WithTimeout(context.Background(), metricsCloseTimeout)
	defer cancel()
	d.metricsSrv.Close(ctx)
}

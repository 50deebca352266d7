package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// wait serves until ctx ends or the server fails, then shuts down: health
// NOT_SERVING and no new jobs at once; the listener keeps accepting
// connections for the drain delay, so load balancers and probes see
// NOT_SERVING before connections are refused; then in-flight RPCs finish
// within the grace period, and running jobs are cancelled and awaited within
// the drain timeout.
func (d *daemon) wait(ctx context.Context) error {
	var serveErr, blockedErr error
	served := false // d.served has been read
	select {
	case <-ctx.Done():
		d.log.Info().Msg("shutdown requested: draining")
	case serveErr = <-d.served:
		served = true
		d.log.Error().Err(serveErr).Msg("gRPC server stopped unexpectedly")
	case <-d.member.blocked():
		// The racks are released already; rmsd leaves for its supervisor
		// to start it again, which joins the cluster anew (docs/cluster.md).
		blockedErr = fmt.Errorf("member blocked by the cluster: %w", d.member.blockedCause())
		d.log.Error().Err(d.member.blockedCause()).Msg("member blocked by the cluster: its racks are released; rmsd exits for its supervisor to start it again")
	}

	d.metrics.DrainStarted(time.Now())
	d.server.MarkNotServing()
	d.engine.BeginShutdown()
	// A member's racks admit no new job from now on; their running jobs
	// get the drain window, while this member still answers the calls
	// forwarded to them.
	d.member.drain(d.cfg.Workflows.DrainTimeoutSeconds)
	if delay := d.cfg.Server.DrainDelaySeconds; delay > 0 && !served && blockedErr == nil {
		d.log.Info().Int("drain_delay_seconds", delay).
			Msg("health NOT_SERVING; accepting connections until the drain delay ends")
		select {
		case <-d.after(seconds(delay)):
		case serveErr = <-d.served:
			served = true
			d.log.Error().Err(serveErr).Msg("gRPC server stopped unexpectedly")
		}
	}

	grace, cancel := context.WithTimeout(context.Background(), seconds(d.cfg.Server.ShutdownGraceSeconds))
	d.server.Shutdown(grace)
	cancel()
	if !served {
		serveErr = <-d.served
	}

	// The racks are handed over (what still runs is interrupted) before
	// the hardware clients and the store close.
	d.member.stop()
	drain, cancel := context.WithTimeout(context.Background(), seconds(d.cfg.Workflows.DrainTimeoutSeconds))
	defer cancel()
	drainErr := d.engine.Drain(drain)
	d.admin.stop()
	d.stopConsole()
	// No RPC runs any more: the queued records go to the store before it
	// closes.
	d.audit.close()
	d.stopMetrics()
	if drainErr != nil {
		drainErr = fmt.Errorf("drain jobs: %w", drainErr)
	}
	d.closeHardware()
	// Its downloads write to the store: cancelled and awaited first.
	d.catalog.Close()
	// Last: draining jobs may still write to it.
	storeErr := d.closeStore()
	d.log.Info().Msg("rmsd stopped")
	return errors.Join(blockedErr, serveErr, drainErr, storeErr)
}

// drainNow stops an engine that never served.
func drainNow(e jobEngine) {
	e.BeginShutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.Drain(ctx)
}

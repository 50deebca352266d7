package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/member"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// memberDaemon is rmsd with [cluster] enabled: one member of a cluster
// sharing the PostgreSQL store. So far a member joins the cluster and owns
// racks (package member); it does not run the job engine or serve the
// RackManager API yet, since jobs are not yet fenced by rack
// (docs/cluster.md).
type memberDaemon struct {
	log    zerolog.Logger
	store  *sqlstore.Store
	member *member.Member
}

// startMember opens the shared store and joins the cluster.
func startMember(ctx context.Context, cfg *config.Config, simulate bool, environ []string, logger logging.Logger) (*memberDaemon, error) {
	c := cfg.Cluster
	switch {
	case simulate:
		return nil, errors.New("--simulate cannot run as a cluster member yet; leave [cluster] enabled unset")
	}
	host, portText, err := net.SplitHostPort(c.AdvertisedAddress)
	if err != nil {
		return nil, fmt.Errorf("[cluster] advertised_address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("[cluster] advertised_address: port %q: %w", portText, err)
	}
	log := logger.Component("cluster")
	// Every member writes to the store: none holds it alone. Racks are
	// fenced one by one instead (store.RackOwners).
	openCtx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	st, err := sqlstore.OpenPostgres(openCtx, cfg.Postgres.DBURL, cfg.Postgres.DBPoolMax, sqlstore.Options{
		ReadTimeout:  seconds(cfg.Storage.TimeoutSeconds),
		WriteTimeout: seconds(cfg.Storage.TimeoutSeconds),
	})
	if err != nil {
		return nil, fmt.Errorf("open the store named by %s: %w", databaseURLSetting(environ), err)
	}
	info := st.Info()
	storeLog := logger.Component("store")
	storeLog.Info().Str("engine", info.Engine).Str("location", info.Location).
		Int("schema_version", info.SchemaVersion).Bool("shared", true).Msg("store opened")
	m, err := member.Start(member.Config{
		MemberID: c.MemberID, BindHost: c.BindAddress, AdvertisedHost: host, Port: port,
		Provider: c.Provider, Seeds: c.SeedList(), AutomanagedPort: c.AutomanagedPort,
		EtcdEndpoints: c.EtcdEndpointList(), EtcdPrefix: c.EtcdPrefix,
		MembershipTimeout: seconds(c.MembershipTimeoutSeconds),
		Store:             st, Log: log,
	}, logger.ActorSystemOption())
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	log.Warn().Msg("cluster mode: this member owns racks but does not run jobs or serve the RackManager API yet (docs/cluster.md)")
	return &memberDaemon{log: logger.Logger, store: st, member: m}, nil
}

// wait runs until ctx ends, then leaves the cluster, releasing this
// member's racks, and closes the store.
func (d *memberDaemon) wait(ctx context.Context) error {
	<-ctx.Done()
	d.log.Info().Msg("shutdown requested: leaving the cluster")
	d.member.Stop()
	var err error
	if cerr := d.store.Close(); cerr != nil {
		err = fmt.Errorf("close store: %w", cerr)
	}
	d.log.Info().Msg("rmsd stopped")
	return err
}

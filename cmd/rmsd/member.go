package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/actors/actorsystem"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/forward"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/member"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// memberDaemon is what [cluster] enabled adds to rmsd: its membership of
// a cluster sharing the PostgreSQL store (package member), and the actor
// system the job engines of the racks it owns run on (rack.go). The rest
// of the daemon (store, catalog, hardware clients, node registry, gRPC,
// admin and metrics) is the single process's, started by the same path.
type memberDaemon struct {
	log    zerolog.Logger
	id     string
	member *member.Member
	racks  *actor.ActorSystem
}

// checkCluster refuses, before anything starts, what cluster mode cannot
// run with yet.
func checkCluster(cfg *config.Config, simulate bool) error {
	c := cfg.Cluster
	switch {
	case !c.Enabled:
		return nil
	case simulate:
		return errors.New("--simulate cannot run as a cluster member yet; leave [cluster] enabled unset")
	case member.ProviderBuiltIn(c.Provider) != nil:
		return fmt.Errorf("[cluster] provider: %w", member.ProviderBuiltIn(c.Provider))
	case cfg.Storage.EncryptionKeyFile == "":
		return errors.New("cluster mode needs [storage] encryption_key_file: a rack's registered nodes reach the other members through the store")
	}
	return nil
}

// joinCluster joins the cluster as a member whose racks run their jobs
// with deps (every dependency but the job engine, which each rack has of
// its own). nodes is the registry's store: the member reloads racks into
// it and announces the racks whose nodes it writes.
func joinCluster(cfg *config.Config, st store.Store, nodes *nodeStore, deps rmsserver.Deps, logger logging.Logger,
	onJob func(messages.JobObservation), onCommit func(time.Duration, error), admin *rackAdmin) (*memberDaemon, error) {
	c := cfg.Cluster
	host, portText, err := net.SplitHostPort(c.AdvertisedAddress)
	if err != nil {
		return nil, fmt.Errorf("[cluster] advertised_address: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("[cluster] advertised_address: port %q: %w", portText, err)
	}
	shared, ok := st.(member.Store)
	if !ok {
		return nil, fmt.Errorf("cluster mode: the %s store cannot fence racks", st.Info().Engine)
	}
	log := logger.Component("cluster")
	racks := actorsystem.New(logger.ActorSystemOption())
	opener := &rackOpener{cfg: cfg, logger: logger, sys: racks, st: shared, nodes: nodes, deps: deps, member: c.MemberID, onJob: onJob, commit: onCommit, admin: admin}
	m, err := member.Start(member.Config{
		MemberID: c.MemberID, BindHost: c.BindAddress, AdvertisedHost: host, Port: port,
		Provider: c.Provider, Seeds: c.SeedList(), AutomanagedPort: c.AutomanagedPort,
		EtcdEndpoints: c.EtcdEndpointList(), EtcdPrefix: c.EtcdPrefix,
		MembershipTimeout: seconds(c.MembershipTimeoutSeconds),
		Store:             shared, Log: log,
		HandOverTimeout: seconds(cfg.Workflows.DrainTimeoutSeconds),
		OpenRack:        opener.open,
		ReloadRackNodes: nodes.reloadRack,
		ReloadAllNodes:  nodes.reloadAll,
	}, logger.ActorSystemOption())
	if err != nil {
		racks.Shutdown()
		return nil, err
	}
	nodes.changed = m.AnnounceNodes
	return &memberDaemon{log: log, id: c.MemberID, member: m, racks: racks}, nil
}

// interceptor is the receiving side of forwarding, innermost in this
// member's gRPC server: every call for a rack or a job goes to the rack's
// owner through the cluster (grpc/forward).
func (d *memberDaemon) interceptor(st store.Store, logger logging.Logger) ([]grpc.UnaryServerInterceptor, error) {
	fst, ok := st.(forward.Store)
	if !ok {
		return nil, fmt.Errorf("cluster mode: the %s store keeps no job racks", st.Info().Engine)
	}
	return []grpc.UnaryServerInterceptor{forward.Interceptor(d.member, fst, d.id, logger.Component("cluster"))}, nil
}

// blocked is closed once another member has blocked this one from the
// cluster and it has fenced itself (its racks abandoned and released);
// nil, never ready, outside cluster mode.
func (d *memberDaemon) blocked() <-chan struct{} {
	if d == nil {
		return nil
	}
	return d.member.Blocked()
}

// blockedCause is why the member fenced itself.
func (d *memberDaemon) blockedCause() error { return d.member.BlockedCause() }

// drain stops admitting jobs for this member's racks and waits, at most
// timeoutSeconds ([workflows] drain_timeout_seconds), for their jobs to
// end.
func (d *memberDaemon) drain(timeoutSeconds int) {
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), seconds(timeoutSeconds))
	defer cancel()
	d.member.Drain(ctx)
}

// stop hands every rack over (interrupting the jobs still running), leaves
// the cluster and stops the racks' actor system.
func (d *memberDaemon) stop() {
	if d == nil {
		return
	}
	d.member.Stop()
	d.racks.Shutdown()
}

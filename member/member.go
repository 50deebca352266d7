package member

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/member/racklease"
	"github.com/rmsd/rmsd/member/rackpb"
)

// Member is this rmsd's place in the cluster: its actor system, remote
// and cluster, the rack grains active on it and the goroutine that keeps
// every registered rack activated.
type Member struct {
	cfg Config
	log zerolog.Logger
	sys *actor.ActorSystem
	c   *cluster.Cluster

	mu      sync.Mutex
	holders map[string]*racklease.Holder // by rack, the leases held here

	cancel context.CancelFunc
	done   chan struct{}
	// closeProvider frees what the membership provider leaves behind.
	closeProvider func()
}

// heartbeatExpiration is the least time gossip waits for a member's
// heartbeat before blocking the member (protoactor's default).
const heartbeatExpiration = 20 * time.Second

// Start joins the cluster and starts keeping the racks. actorOpts
// configure the actor system (its logger). A failure to bind the remote or
// to start the provider is returned, with nothing left running that can
// be stopped.
func Start(cfg Config, actorOpts ...actor.ConfigOption) (_ *Member, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = "rmsd"
	}
	provider, closeProvider, err := cfg.newProvider()
	if err != nil {
		return nil, err
	}
	m := &Member{closeProvider: closeProvider, cfg: cfg, log: cfg.Log.With().Str("member", cfg.MemberID).Logger(), holders: map[string]*racklease.Holder{}, done: make(chan struct{})}
	m.sys = actor.NewActorSystem(actorOpts...)
	bind := cfg.BindHost
	if bind == "" {
		bind = cfg.AdvertisedHost
	}
	remoteCfg := remote.Configure(bind, cfg.Port, remote.WithAdvertisedHost(fmt.Sprintf("%s:%d", cfg.AdvertisedHost, cfg.Port)))
	kind := cluster.NewKind(rackKind, actor.PropsFromProducer(func() actor.Actor { return &rackGrain{m: m} }))
	m.c = cluster.New(m.sys, cluster.Configure(cfg.ClusterName, provider, disthash.New(), remoteCfg,
		cluster.WithKinds(kind),
		cluster.WithRequestTimeout(cfg.tick()),
		// Membership is the provider's: gossip blocks a member for good
		// once its heartbeat is this late, so a loaded member must not
		// reach it first.
		cluster.WithHeartbeatExpiration(max(heartbeatExpiration, 4*cfg.MembershipTimeout)),
	))
	// protoactor panics where it cannot start (a port in use).
	defer func() {
		if p := recover(); p != nil {
			closeProvider()
			err = fmt.Errorf("member: join the cluster on %s:%d: %v", bind, cfg.Port, p)
		}
	}()
	m.c.StartMember()
	m.log.Info().Str("address", m.sys.Address()).Str("provider", cfg.providerName()).Strs("seeds", cfg.Seeds).Int("automanaged_port", cfg.AutomanagedPort).
		Strs("etcd_endpoints", cfg.EtcdEndpoints).
		Dur("membership_timeout_ms", cfg.MembershipTimeout).Msg("cluster member started")

	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.keep(ctx)
	return m, nil
}

// Stop stops touching racks, leaves the cluster (its grains stop and
// release their racks) and releases any lease still held.
func (m *Member) Stop() {
	m.cancel()
	<-m.done
	m.c.Shutdown(true)
	m.closeProvider()
	m.mu.Lock()
	left := make([]*racklease.Holder, 0, len(m.holders))
	for _, h := range m.holders {
		left = append(left, h)
	}
	m.holders = map[string]*racklease.Holder{}
	m.mu.Unlock()
	for _, h := range left {
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.tick())
		_ = h.Release(ctx)
		cancel()
	}
	m.log.Info().Msg("cluster member stopped")
}

// keep touches every registered rack's grain every tick, so that each has
// an activation, and so an owner, somewhere in the cluster.
func (m *Member) keep(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(m.cfg.tick())
	defer t.Stop()
	for {
		m.touchAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// touchAll touches every registered rack once, in parallel, each within
// one tick.
func (m *Member) touchAll(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, m.cfg.tick())
	racks, err := m.cfg.Store.ListRacks(lctx)
	cancel()
	if err != nil {
		m.log.Warn().Err(err).Msg("registered racks not read; their grains are touched again next time")
		return
	}
	var wg sync.WaitGroup
	for _, r := range racks {
		wg.Go(func() {
			_, err := m.c.Request(r.RackID, rackKind, &rackpb.RackTouch{FromMember: m.cfg.MemberID}, cluster.WithTimeout(m.cfg.tick()))
			if err != nil && ctx.Err() == nil {
				m.log.Debug().Err(err).Str("rack_id", r.RackID).Msg("rack grain not reached; touched again next time")
			}
		})
	}
	wg.Wait()
}

// held and unheld keep the member's record of the leases its grains hold,
// which Stop releases if a grain has not.
func (m *Member) held(rackID string, h *racklease.Holder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holders[rackID] = h
}

func (m *Member) unheld(rackID string, h *racklease.Holder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holders[rackID] == h {
		delete(m.holders, rackID)
	}
}

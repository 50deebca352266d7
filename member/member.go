package member

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors/actorsystem"
	"github.com/rmsd/rmsd/member/racklease"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/store"
)

// Member is this rmsd's place in the cluster: its actor system, remote
// and cluster, the rack grains active on it and the goroutine that keeps
// every registered rack activated.
type Member struct {
	cfg Config
	log zerolog.Logger
	sys *actor.ActorSystem
	c   *cluster.Cluster
	// place decides which member each rack's grain is activated on.
	place *placement

	mu      sync.Mutex
	holders map[string]*racklease.Holder // by rack, the leases held here
	grains  map[string]*actor.PID        // by rack, the grains active here

	cancel context.CancelFunc
	done   chan struct{}
	// reloadDone is closed when the full node reloads have stopped.
	reloadDone chan struct{}
	// closeProvider frees what the membership provider leaves behind.
	closeProvider func()
	// blocked is closed once the member has fenced itself, blockedCause
	// (under mu) saying why; watchDone when the watch for a block has
	// stopped (fence.go).
	blocked, watchDone chan struct{}
	blockedCause       error
	// view is the other members' addresses in this member's view of the
	// cluster and viewSystems their actor system ids (under mu), from
	// protoactor's topology events; viewVersion counts the events.
	// leftPeers are the members that left the view, which protoactor has
	// blocked for good: address by actor system id (partitionwatch.go).
	view, viewSystems []string
	viewVersion       int
	leftPeers         map[string]string
	viewSub           *eventstream.Subscription
	// row is this process's row of its view in the store and rowVersion
	// the viewVersion it holds (under mu; partitionwatch.go).
	row        store.MemberView
	rowVersion int
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
	m := &Member{closeProvider: closeProvider, cfg: cfg, log: cfg.Log.With().Str("member", cfg.MemberID).Logger(), holders: map[string]*racklease.Holder{},
		place: newPlacement(), grains: map[string]*actor.PID{}, done: make(chan struct{}), reloadDone: make(chan struct{}),
		blocked: make(chan struct{}), watchDone: make(chan struct{}), leftPeers: map[string]string{}, rowVersion: -1}
	m.sys = actorsystem.New(actorOpts...)
	bind := cfg.BindHost
	if bind == "" {
		bind = cfg.AdvertisedHost
	}
	remoteCfg := remote.Configure(bind, cfg.Port, remote.WithAdvertisedHost(fmt.Sprintf("%s:%d", cfg.AdvertisedHost, cfg.Port)))
	kind := cluster.NewKind(rackKind, actor.PropsFromProducer(func() actor.Actor { return &rackGrain{m: m} }, actor.WithMailbox(grainMailbox)))
	m.c = cluster.New(m.sys, cluster.Configure(cfg.ClusterName, provider, m.place, remoteCfg,
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
	m.viewSub = m.sys.EventStream.Subscribe(m.viewChanged)
	m.c.StartMember()
	if _, err := m.sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &nodesActor{m: m} }), nodesActorName); err != nil {
		m.c.Shutdown(false)
		m.closeProvider()
		return nil, fmt.Errorf("member: start the nodes actor: %w", err)
	}
	m.log.Info().Str("address", m.sys.Address()).Str("provider", cfg.providerName()).Strs("seeds", cfg.Seeds).Int("automanaged_port", cfg.AutomanagedPort).
		Strs("etcd_endpoints", cfg.EtcdEndpoints).
		Dur("membership_timeout_ms", cfg.MembershipTimeout).Msg("cluster member started")

	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.keep(ctx)
	go m.reloadAllNodes(ctx)
	go m.watchBlocked(ctx)
	return m, nil
}

// Stop stops touching racks, hands every rack over (its service stops,
// interrupting the jobs still running, and its lease is released),
// leaves the cluster and releases any lease still held.
func (m *Member) Stop() {
	m.cancel()
	<-m.done
	<-m.reloadDone
	<-m.watchDone
	m.leaveViewRow()
	m.handOverAll()
	m.c.Shutdown(true)
	m.sys.EventStream.Unsubscribe(m.viewSub)
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

// placement returns the address of the member the current membership
// and the draining members place rackID's grain on ("" for no member).
func (m *Member) placement(rackID string) string {
	return m.place.owner(cluster.NewClusterIdentity(rackID, rackKind))
}

// grainStarted and grainStopped keep the member's record of its grains.
func (m *Member) grainStarted(rackID string, pid *actor.PID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grains[rackID] = pid
}

func (m *Member) grainStopped(rackID string, pid *actor.PID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.grains[rackID].Equal(pid) {
		delete(m.grains, rackID)
	}
}

// localGrains returns the grains active on this member.
func (m *Member) localGrains() map[string]*actor.PID {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*actor.PID, len(m.grains))
	for id, pid := range m.grains {
		out[id] = pid
	}
	return out
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

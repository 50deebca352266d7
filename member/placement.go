package member

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/eventstream"

	"github.com/rmsd/rmsd/member/rackpb"
)

// drainGossipKey is the key of protoactor's gossip state under which a
// draining member publishes its rackpb.MemberDrain.
const drainGossipKey = "rmsd-drain"

// activatorName is the name of each member's activator, the actor that
// activates the grains placed on the member. It is the name protoactor's
// distributed hash gives its own, and the activator answers the same
// cluster.ActivationRequest, so members with either lookup activate grains
// for each other (a rolling upgrade from an rmsd that used disthash).
const activatorName = "partition-activator"

// placement is the member's cluster.IdentityLookup: protoactor's
// distributed hash (rendezvous hashing of the identity over the members
// hosting its kind, as disthash does) with one change, so that a draining
// member can hand its idle racks over while it is still a member. A
// member that publishes a MemberDrain in the gossip state is no placement
// target, except for the racks it keeps: those stay on it, so that calls
// for them reach the activation that runs their jobs.
type placement struct {
	c *cluster.Cluster

	mu sync.Mutex
	// members is the last topology's, with this member in it
	// (withSelf); drains are the draining members' kept racks, by
	// protoactor member id (this member's own included); self is this
	// member, as the others list it.
	members []*cluster.Member
	drains  map[string]map[string]bool
	self    *cluster.Member

	activator *actor.PID
	sub       *eventstream.Subscription
	stop      sync.Once
}

var _ cluster.IdentityLookup = (*placement)(nil)

func newPlacement() *placement {
	return &placement{drains: map[string]map[string]bool{}}
}

// Setup implements cluster.IdentityLookup: it starts the activator and
// follows the topology and the other members' drains.
func (p *placement) Setup(c *cluster.Cluster, _ []string, _ bool) {
	p.c = c
	sys := c.ActorSystem
	p.activator, _ = sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor {
		return &activator{p: p, grains: map[string]activation{}}
	}), activatorName)
	p.sub = sys.EventStream.Subscribe(func(ev any) {
		switch ev := ev.(type) {
		case *cluster.ClusterTopology:
			p.topology(ev.Members)
			sys.Root.Send(p.activator, &placementChanged{})
		case *cluster.GossipUpdate:
			if ev.Key == drainGossipKey {
				p.gossip(ev)
			}
		}
	})
}

// Shutdown implements cluster.IdentityLookup: it stops following and
// stops the activator, which stops the grains still active here. The
// cluster calls it more than once.
func (p *placement) Shutdown() {
	p.stop.Do(func() {
		p.c.ActorSystem.EventStream.Unsubscribe(p.sub)
		_ = p.c.ActorSystem.Root.PoisonFuture(p.activator).Wait()
	})
}

// Get implements cluster.IdentityLookup: the PID of the identity's
// activation on the member that placement places it on, activated there
// if need be; nil when there is none (no member, the member unreachable,
// or a draining member refusing it), which the cluster's caller retries.
func (p *placement) Get(ci *cluster.ClusterIdentity) *actor.PID {
	addr := p.owner(ci)
	if addr == "" {
		return nil
	}
	res, err := p.c.ActorSystem.Root.RequestFuture(actor.NewPID(addr, activatorName),
		&cluster.ActivationRequest{ClusterIdentity: ci}, activationTimeout).Result()
	if err != nil {
		return nil
	}
	if r, ok := res.(*cluster.ActivationResponse); ok && !r.Failed {
		return r.Pid
	}
	return nil
}

// RemovePid implements cluster.IdentityLookup: it forgets pid as the
// identity's activation in this member's cache.
func (p *placement) RemovePid(ci *cluster.ClusterIdentity, pid *actor.PID) {
	p.c.PidCache.RemoveByValue(ci.Identity, ci.Kind, pid)
}

// owner returns the address of the member ci is placed on ("" for none).
func (p *placement) owner(ci *cluster.ClusterIdentity) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return place(p.members, p.drains, ci)
}

// withSelf is the member list a member places on: a topology, with
// itself in it. A member's view of the membership can lag behind the
// others' about itself: it joined last and read its first topology before
// its own health port answered, or one poll of its own port timed out.
// The others place racks on it meanwhile, and a running member is a
// target for itself whatever its view says; without it, it would take
// those racks as placed elsewhere and hand them over, a draining member's
// kept racks with their jobs running. An empty list stays empty: before
// its first topology a member places nothing.
func withSelf(members []*cluster.Member, self *cluster.Member) []*cluster.Member {
	if len(members) == 0 || self == nil {
		return members
	}
	for _, m := range members {
		if m.Id == self.Id {
			return members
		}
	}
	return append(slices.Clip(members), self)
}

// place is the placement rule. A draining member that keeps ci's identity
// gets it. Otherwise the identity is hashed over the members hosting its
// kind that are not draining, or over all of them when every one is
// draining (they go on as the distributed hash placed them).
func place(members []*cluster.Member, drains map[string]map[string]bool, ci *cluster.ClusterIdentity) string {
	var hosts, live cluster.Members
	for _, m := range members {
		if !m.HasKind(ci.Kind) {
			continue
		}
		hosts = append(hosts, m)
		kept, draining := drains[m.Id]
		switch {
		case !draining:
			live = append(live, m)
		case kept[ci.Identity]:
			return m.Address()
		}
	}
	if len(live) == 0 {
		live = hosts
	}
	rdv := cluster.NewRendezvous()
	rdv.UpdateMembers(live)
	return rdv.GetByClusterIdentity(ci)
}

// topology takes a new member list, forgetting the drains of the members
// that left it.
func (p *placement) topology(members []*cluster.Member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.self == nil {
		p.self = selfMember(p.c)
	}
	p.members = withSelf(members, p.self)
	self := p.c.ActorSystem.ID
	for id := range p.drains {
		if id == self {
			continue
		}
		found := false
		for _, m := range members {
			found = found || m.Id == id
		}
		if !found {
			delete(p.drains, id)
		}
	}
}

// gossip takes another member's drain from the gossip state.
func (p *placement) gossip(ev *cluster.GossipUpdate) {
	if ev.MemberID == p.c.ActorSystem.ID {
		return
	}
	var d rackpb.MemberDrain
	if err := ev.Value.UnmarshalTo(&d); err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drains[ev.MemberID] = set(d.GetKeptRacks())
}

// drain makes this member a draining one that keeps the racks kept, and
// publishes it to the others.
func (p *placement) drain(kept []string) {
	p.mu.Lock()
	p.drains[p.c.ActorSystem.ID] = set(kept)
	p.mu.Unlock()
	p.c.Gossip.SetState(drainGossipKey, &rackpb.MemberDrain{KeptRacks: kept})
}

// keepNoLonger stops keeping rackID on this draining member, and publishes
// it: from then on the rack is placed on another member.
func (p *placement) keepNoLonger(rackID string) {
	p.mu.Lock()
	kept := p.drains[p.c.ActorSystem.ID]
	delete(kept, rackID)
	left := make([]string, 0, len(kept))
	for r := range kept {
		left = append(left, r)
	}
	p.mu.Unlock()
	p.c.Gossip.SetState(drainGossipKey, &rackpb.MemberDrain{KeptRacks: left})
}

// draining reports whether this member is draining.
func (p *placement) draining() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.drains[p.c.ActorSystem.ID]
	return ok
}

// here reports whether ci is placed on this member.
func (p *placement) here(ci *cluster.ClusterIdentity) bool {
	return p.owner(ci) == p.c.ActorSystem.Address()
}

// selfMember is this member as the others' topologies list it: its actor
// system id, its remote address and the kinds it hosts.
func selfMember(c *cluster.Cluster) *cluster.Member {
	host, port, err := net.SplitHostPort(c.ActorSystem.Address())
	n, perr := strconv.ParseInt(port, 10, 32)
	if err != nil || perr != nil {
		return nil
	}
	return &cluster.Member{Id: c.ActorSystem.ID, Host: host, Port: int32(n), Kinds: c.GetClusterKinds()}
}

func set(list []string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, s := range list {
		out[s] = true
	}
	return out
}

// placementChanged tells the activator to retire the activations that the
// placement now puts on another member: each hands its rack over, then
// stops.
type placementChanged struct{}

// activation is one grain the activator started.
type activation struct {
	ci  *cluster.ClusterIdentity
	pid *actor.PID
}

// activator starts the grains placed on this member and knows them. It
// starts one unless the member is draining and the grain is placed on
// another member: a draining member starts no grain it is handing over.
type activator struct {
	p      *placement
	grains map[string]activation // by the identity's key
}

// Receive implements actor.Actor.
func (a *activator) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *cluster.ActivationRequest:
		ctx.Respond(a.activate(ctx, msg.ClusterIdentity))
	case *placementChanged:
		for _, g := range a.grains {
			if !a.p.here(g.ci) {
				ctx.Send(g.pid, &retire{})
			}
		}
	case *actor.Terminated:
		for key, g := range a.grains {
			if g.pid.Equal(msg.Who) {
				delete(a.grains, key)
				if kind := a.p.c.GetClusterKind(g.ci.Kind); kind != nil {
					kind.Dec()
				}
			}
		}
	case *actor.Stopping:
		stops := make([]*actor.Future, 0, len(a.grains))
		for _, g := range a.grains {
			stops = append(stops, ctx.PoisonFuture(g.pid))
		}
		for _, f := range stops {
			_ = f.Wait()
		}
	}
}

// activate returns the identity's activation here, started if need be.
func (a *activator) activate(ctx actor.Context, ci *cluster.ClusterIdentity) *cluster.ActivationResponse {
	if ci == nil {
		return &cluster.ActivationResponse{Failed: true}
	}
	if g, ok := a.grains[ci.AsKey()]; ok {
		return &cluster.ActivationResponse{Pid: g.pid}
	}
	kind := a.p.c.GetClusterKind(ci.Kind)
	if kind == nil || (a.p.draining() && !a.p.here(ci)) {
		return &cluster.ActivationResponse{Failed: true}
	}
	pid := ctx.SpawnPrefix(cluster.WithClusterIdentity(kind.Props, ci), ci.Identity)
	kind.Inc()
	a.grains[ci.AsKey()] = activation{ci: ci, pid: pid}
	return &cluster.ActivationResponse{Pid: pid}
}

// activationTimeout bounds a request to an activator (disthash's bound): a
// loaded member answers it late, and the caller's own timeout bounds the
// call anyway.
const activationTimeout = 5 * time.Second

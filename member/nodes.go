package member

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/member/rackpb"
)

// Registered nodes are in the shared store; each member keeps its own
// registry of them (the handlers' look-ups). A rack's node changes are
// written by its owner, which then tells every member to reload the rack
// (AnnounceNodes, to each member's nodesActorName actor); every member
// also reloads every rack once a membership timeout, in case it missed
// an announcement (it was not yet a member, or the message was lost).

// nodesActorName is the name of the actor, on every member, that receives
// RackNodesChanged.
const nodesActorName = "rmsd-nodes"

// nodesActor reloads the racks it is told of, one at a time.
type nodesActor struct{ m *Member }

// Receive implements actor.Actor.
func (a *nodesActor) Receive(ctx actor.Context) {
	if msg, ok := ctx.Message().(*rackpb.RackNodesChanged); ok {
		a.m.reloadRack(msg.RackId, msg.FromMember)
	}
}

// AnnounceNodes tells every member, this one included, that rackID's
// nodes changed in the store. It does not wait for them to reload.
func (m *Member) AnnounceNodes(rackID string) {
	msg := &rackpb.RackNodesChanged{RackId: rackID, FromMember: m.cfg.MemberID}
	for _, mem := range m.c.MemberList.Members().Members() {
		m.sys.Root.Send(actor.NewPID(mem.Address(), nodesActorName), msg)
	}
}

// reloadRack reloads one rack's nodes, within one membership timeout.
func (m *Member) reloadRack(rackID, from string) {
	if m.cfg.ReloadRackNodes == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.MembershipTimeout)
	defer cancel()
	if err := m.cfg.ReloadRackNodes(ctx, rackID); err != nil {
		m.log.Warn().Err(err).Str("rack_id", rackID).Str("from_member", from).
			Msg("rack's nodes not reloaded after a change; the next full reload catches up")
	}
}

// reloadAllNodes reloads every rack's nodes every membership timeout
// until ctx ends.
func (m *Member) reloadAllNodes(ctx context.Context) {
	defer close(m.reloadDone)
	if m.cfg.ReloadAllNodes == nil {
		return
	}
	t := time.NewTicker(m.cfg.MembershipTimeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, m.cfg.MembershipTimeout)
		if err := m.cfg.ReloadAllNodes(rctx); err != nil && ctx.Err() == nil {
			m.log.Warn().Err(err).Msg("registered nodes not reloaded; trying again after the next membership timeout")
		}
		cancel()
	}
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/store"
)

// In cluster mode a rack's node changes are written by the rack's owner
// (its calls are forwarded there) and reach the other members through the
// store: the owner announces the rack (member.AnnounceNodes) and every
// member reloads it; every member also reloads all racks once a membership
// timeout, and a member that takes a rack over reloads it before it runs
// the rack's jobs.

// reloadRack makes the registry's nodes of rackID those of the store.
func (s *nodeStore) reloadRack(ctx context.Context, rackID string) error {
	recs, err := s.st.ListNodes(ctx)
	if err != nil {
		return fmt.Errorf("reload rack %s: read registered nodes: %w", rackID, err)
	}
	racks, err := s.st.ListRacks(ctx)
	if err != nil {
		return fmt.Errorf("reload rack %s: read registered racks: %w", rackID, err)
	}
	return s.reload(recs, racks, func(id string) bool { return id == rackID })
}

// reloadAll makes the registry's nodes of every rack the store has those
// of the store.
func (s *nodeStore) reloadAll(ctx context.Context) error {
	recs, err := s.st.ListNodes(ctx)
	if err != nil {
		return fmt.Errorf("reload nodes: read registered nodes: %w", err)
	}
	racks, err := s.st.ListRacks(ctx)
	if err != nil {
		return fmt.Errorf("reload nodes: read registered racks: %w", err)
	}
	return s.reload(recs, racks, func(string) bool { return true })
}

// reload replaces the nodes of the racks that want keeps with recs.
func (s *nodeStore) reload(recs []store.NodeRecord, racks []store.RackRecord, want func(rackID string) bool) error {
	byRack := map[string][]hw.Node{}
	for _, rec := range recs {
		if !want(rec.RackID) {
			continue
		}
		n, err := s.open(rec)
		if err != nil {
			s.log.Error().Err(err).Str("rack_id", rec.RackID).Str("node_id", rec.NodeID).Str("key_id", rec.KeyID).
				Msg("registered node not reloaded: its settings do not open with the key file")
			continue
		}
		byRack[rec.RackID] = append(byRack[rec.RackID], n)
	}
	var errs []error
	for _, r := range racks {
		if !want(r.RackID) {
			continue
		}
		s.recordRack(r.RackID)
		nodes := byRack[r.RackID]
		for i, err := range s.reg.ReloadRack(r.RackID, hw.ProductFamily(r.Family), nodes) {
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s of rack %s: %w", nodes[i].ID, r.RackID, err))
			}
		}
	}
	return errors.Join(errs...)
}

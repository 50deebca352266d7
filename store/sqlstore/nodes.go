package sqlstore

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// PutNode implements store.Nodes.
func (t *tx) PutNode(ctx context.Context, n store.NodeRecord) (store.NodeRecord, error) {
	if err := n.Validate(); err != nil {
		return store.NodeRecord{}, err
	}
	n.UpdatedAt = t.now()
	if _, err := t.exec(ctx, `INSERT INTO registered_nodes (rack_id, node_id, key_id, sealed, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (rack_id, node_id) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, updated_at = excluded.updated_at`,
		n.RackID, n.NodeID, n.KeyID, n.Sealed, t.d.timeArg(n.UpdatedAt)); err != nil {
		return store.NodeRecord{}, fmt.Errorf("sqlstore: put node %s/%s: %w", n.RackID, n.NodeID, err)
	}
	return n, nil
}

// DeleteNode implements store.Nodes.
func (t *tx) DeleteNode(ctx context.Context, rackID, nodeID string) error {
	res, err := t.exec(ctx, `DELETE FROM registered_nodes WHERE rack_id = ? AND node_id = ?`, rackID, nodeID)
	if err != nil {
		return fmt.Errorf("sqlstore: delete node %s/%s: %w", rackID, nodeID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlstore: delete node %s/%s: %w", rackID, nodeID, err)
	} else if n == 0 {
		return fmt.Errorf("node %s/%s: %w", rackID, nodeID, store.ErrNotFound)
	}
	return nil
}

// ListNodes implements store.Nodes.
func (t *tx) ListNodes(ctx context.Context) ([]store.NodeRecord, error) {
	rows, err := t.query(ctx, `SELECT rack_id, node_id, key_id, sealed, updated_at FROM registered_nodes ORDER BY rack_id, node_id`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list nodes: %w", err)
	}
	defer rows.Close()
	var out []store.NodeRecord
	for rows.Next() {
		var n store.NodeRecord
		if err := rows.Scan(&n.RackID, &n.NodeID, &n.KeyID, &n.Sealed, timeCol{&n.UpdatedAt}); err != nil {
			return nil, fmt.Errorf("sqlstore: list nodes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list nodes: %w", err)
	}
	return out, nil
}

// PutNode implements store.Nodes.
func (s *Store) PutNode(ctx context.Context, n store.NodeRecord) (store.NodeRecord, error) {
	return write(ctx, s, func(t *tx) (store.NodeRecord, error) { return t.PutNode(ctx, n) })
}

// DeleteNode implements store.Nodes.
func (s *Store) DeleteNode(ctx context.Context, rackID, nodeID string) error {
	return writeErr(ctx, s, func(t *tx) error { return t.DeleteNode(ctx, rackID, nodeID) })
}

// ListNodes implements store.Nodes.
func (s *Store) ListNodes(ctx context.Context) ([]store.NodeRecord, error) {
	return view(ctx, s, func(t *tx) ([]store.NodeRecord, error) { return t.ListNodes(ctx) })
}

// PutRack implements store.Nodes.
func (t *tx) PutRack(ctx context.Context, r store.RackRecord) error {
	if r.RackID == "" || r.Family == "" {
		return fmt.Errorf("rack record: rack_id and family are required: %w", store.ErrInvalid)
	}
	if _, err := t.exec(ctx, `INSERT INTO registered_racks (rack_id, family) VALUES (?, ?) ON CONFLICT (rack_id) DO NOTHING`,
		r.RackID, r.Family); err != nil {
		return fmt.Errorf("sqlstore: put rack %s: %w", r.RackID, err)
	}
	return nil
}

// ListRacks implements store.Nodes.
func (t *tx) ListRacks(ctx context.Context) ([]store.RackRecord, error) {
	rows, err := t.query(ctx, `SELECT rack_id, family FROM registered_racks ORDER BY rack_id`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list racks: %w", err)
	}
	defer rows.Close()
	var out []store.RackRecord
	for rows.Next() {
		var r store.RackRecord
		if err := rows.Scan(&r.RackID, &r.Family); err != nil {
			return nil, fmt.Errorf("sqlstore: list racks: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list racks: %w", err)
	}
	return out, nil
}

// PutRack implements store.Nodes.
func (s *Store) PutRack(ctx context.Context, r store.RackRecord) error {
	return writeErr(ctx, s, func(t *tx) error { return t.PutRack(ctx, r) })
}

// ListRacks implements store.Nodes.
func (s *Store) ListRacks(ctx context.Context) ([]store.RackRecord, error) {
	return view(ctx, s, func(t *tx) ([]store.RackRecord, error) { return t.ListRacks(ctx) })
}

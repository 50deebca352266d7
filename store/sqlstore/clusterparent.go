package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// Cluster parents (store.ClusterParents): one cluster_parent row and one
// cluster_parent_rack row per rack, in request order. Both engines have
// the tables; only a PostgreSQL store is ever shared by a cluster.

var _ store.ClusterParents = (*Store)(nil)

// CreateClusterParent implements store.ClusterParents.
func (s *Store) CreateClusterParent(ctx context.Context, p store.ClusterParent) (store.ClusterParent, error) {
	if err := p.Validate(); err != nil {
		return store.ClusterParent{}, err
	}
	return write(ctx, s, func(t *tx) (store.ClusterParent, error) {
		p.CreatedAt = t.now()
		res, err := t.exec(ctx, `INSERT INTO cluster_parent (id, job_type, method, member, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, p.ID, p.Type, p.Method, p.Member, t.d.timeArg(p.CreatedAt))
		if err != nil {
			return store.ClusterParent{}, fmt.Errorf("sqlstore: create cluster parent %s: %w", p.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return store.ClusterParent{}, fmt.Errorf("sqlstore: create cluster parent %s: %w", p.ID, err)
		} else if n == 0 {
			return store.ClusterParent{}, fmt.Errorf("cluster parent %s: %w", p.ID, store.ErrExists)
		}
		for i, r := range p.Racks {
			if _, err := t.exec(ctx, `INSERT INTO cluster_parent_rack (parent_id, position, rack_id, job_id, failure) VALUES (?, ?, ?, ?, ?)`,
				p.ID, i, r.RackID, r.JobID, r.Failure); err != nil {
				return store.ClusterParent{}, fmt.Errorf("sqlstore: create cluster parent %s: rack %s: %w", p.ID, r.RackID, err)
			}
		}
		return p, nil
	})
}

// ClusterParent implements store.ClusterParents.
func (s *Store) ClusterParent(ctx context.Context, id string) (store.ClusterParent, error) {
	return view(ctx, s, func(t *tx) (store.ClusterParent, error) {
		p := store.ClusterParent{ID: id}
		err := t.queryRow(ctx, `SELECT job_type, method, member, created_at FROM cluster_parent WHERE id = ?`, id).
			Scan(&p.Type, &p.Method, &p.Member, timeCol{&p.CreatedAt})
		if errors.Is(err, sql.ErrNoRows) {
			return store.ClusterParent{}, fmt.Errorf("cluster parent %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return store.ClusterParent{}, fmt.Errorf("sqlstore: read cluster parent %s: %w", id, err)
		}
		rows, err := t.query(ctx, `SELECT rack_id, job_id, failure FROM cluster_parent_rack WHERE parent_id = ? ORDER BY position`, id)
		if err != nil {
			return store.ClusterParent{}, fmt.Errorf("sqlstore: read cluster parent %s: %w", id, err)
		}
		defer rows.Close()
		for rows.Next() {
			var r store.ClusterParentRack
			if err := rows.Scan(&r.RackID, &r.JobID, &r.Failure); err != nil {
				return store.ClusterParent{}, fmt.Errorf("sqlstore: read cluster parent %s: %w", id, err)
			}
			p.Racks = append(p.Racks, r)
		}
		if err := rows.Err(); err != nil {
			return store.ClusterParent{}, fmt.Errorf("sqlstore: read cluster parent %s: %w", id, err)
		}
		return p, nil
	})
}

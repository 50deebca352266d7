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

// ListClusterParents implements store.ClusterParents.
func (s *Store) ListClusterParents(ctx context.Context, limit int) ([]store.ClusterParent, error) {
	return view(ctx, s, func(t *tx) ([]store.ClusterParent, error) {
		newest := `SELECT id, job_type, method, member, created_at FROM cluster_parent ORDER BY created_at DESC, id DESC`
		args := []any{}
		if limit > 0 {
			newest += ` LIMIT ?`
			args = append(args, limit)
		}
		rows, err := t.query(ctx, `SELECT p.id, p.job_type, p.method, p.member, p.created_at, r.rack_id, r.job_id, r.failure
			FROM (`+newest+`) p JOIN cluster_parent_rack r ON r.parent_id = p.id
			ORDER BY p.created_at DESC, p.id DESC, r.position`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: list cluster parents: %w", err)
		}
		defer rows.Close()
		var out []store.ClusterParent
		for rows.Next() {
			var p store.ClusterParent
			var r store.ClusterParentRack
			if err := rows.Scan(&p.ID, &p.Type, &p.Method, &p.Member, timeCol{&p.CreatedAt}, &r.RackID, &r.JobID, &r.Failure); err != nil {
				return nil, fmt.Errorf("sqlstore: list cluster parents: %w", err)
			}
			if n := len(out); n == 0 || out[n-1].ID != p.ID {
				out = append(out, p)
			}
			last := &out[len(out)-1]
			last.Racks = append(last.Racks, r)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlstore: list cluster parents: %w", err)
		}
		return out, nil
	})
}

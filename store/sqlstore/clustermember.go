package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/store"
)

// Cluster members' views (store.ClusterMembers) on PostgreSQL: one
// cluster_member row per member id, never deleted, so that its epoch only
// grows. Times are the server's.

var _ store.ClusterMembers = (*Store)(nil)

// JoinMember implements store.ClusterMembers.
func (s *Store) JoinMember(ctx context.Context, member, system, address string) (store.MemberView, error) {
	if err := s.clusterable(); err != nil {
		return store.MemberView{}, err
	}
	if member == "" || system == "" {
		return store.MemberView{}, fmt.Errorf("sqlstore: join member %q with actor system %q: both are required: %w", member, system, store.ErrInvalid)
	}
	return write(ctx, s, func(t *tx) (store.MemberView, error) {
		v := store.MemberView{Member: member, System: system, Address: address, View: []string{}}
		err := t.queryRow(ctx, `INSERT INTO cluster_member (member_id, epoch, system_id, address, view, has_left, updated_at)
			VALUES (?, 1, ?, ?, '[]', false, now())
			ON CONFLICT (member_id) DO UPDATE SET epoch = cluster_member.epoch + 1, system_id = excluded.system_id,
				address = excluded.address, view = '[]', has_left = false, updated_at = now()
			RETURNING epoch, updated_at`, member, system, address).Scan(&v.Epoch, timeCol{&v.UpdatedAt})
		if err != nil {
			return store.MemberView{}, fmt.Errorf("sqlstore: join member %s: %w", member, err)
		}
		return v, nil
	})
}

// WriteMemberView implements store.ClusterMembers.
func (s *Store) WriteMemberView(ctx context.Context, v store.MemberView) error {
	if err := s.clusterable(); err != nil {
		return err
	}
	view := slices.Sorted(slices.Values(v.View))
	if view == nil {
		view = []string{}
	}
	doc, err := json.Marshal(view)
	if err != nil {
		return fmt.Errorf("sqlstore: write the view of member %s: %w", v.Member, err)
	}
	return writeErr(ctx, s, func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE cluster_member SET view = ?, has_left = ?, updated_at = now() WHERE member_id = ? AND epoch = ?`,
			string(doc), v.Left, v.Member, v.Epoch)
		if err != nil {
			return fmt.Errorf("sqlstore: write the view of member %s: %w", v.Member, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlstore: write the view of member %s: %w", v.Member, err)
		} else if n == 0 {
			return fmt.Errorf("sqlstore: write the view of member %s under epoch %d: %w", v.Member, v.Epoch, store.ErrMemberSuperseded)
		}
		return nil
	})
}

// MemberViews implements store.ClusterMembers.
func (s *Store) MemberViews(ctx context.Context) ([]store.MemberView, error) {
	if err := s.clusterable(); err != nil {
		return nil, err
	}
	return view(ctx, s, func(t *tx) ([]store.MemberView, error) {
		rows, err := t.query(ctx, `SELECT member_id, epoch, system_id, address, view, has_left, updated_at FROM cluster_member ORDER BY member_id`)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: read the members' views: %w", err)
		}
		defer rows.Close()
		var out []store.MemberView
		for rows.Next() {
			var v store.MemberView
			var doc string
			if err := rows.Scan(&v.Member, &v.Epoch, &v.System, &v.Address, &doc, &v.Left, timeCol{&v.UpdatedAt}); err != nil {
				return nil, fmt.Errorf("sqlstore: read the members' views: %w", err)
			}
			if err := json.Unmarshal([]byte(doc), &v.View); err != nil {
				return nil, fmt.Errorf("sqlstore: read the view of member %s: %w", v.Member, err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlstore: read the members' views: %w", err)
		}
		return out, nil
	})
}

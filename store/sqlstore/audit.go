package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rmsd/rmsd/store"
)

var _ store.AuditLog = (*Store)(nil)

// auditIdentity is the identity column: the caller's structured fields.
type auditIdentity struct {
	Verified bool     `json:"verified,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	CN       string   `json:"cn,omitempty"`
	OU       []string `json:"ou,omitempty"`
	DNS      []string `json:"dns,omitempty"`
	URIs     []string `json:"uris,omitempty"`
	Addr     string   `json:"addr,omitempty"`
}

// AppendAudit implements store.AuditLog, within the store's write
// deadline.
func (s *Store) AppendAudit(ctx context.Context, records []store.AuditRecord) ([]store.AuditRecord, error) {
	for _, r := range records {
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	return write(ctx, s, func(t *tx) ([]store.AuditRecord, error) {
		out := make([]store.AuditRecord, 0, len(records))
		for _, r := range records {
			r, err := t.appendAudit(ctx, r)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	})
}

func (t *tx) appendAudit(ctx context.Context, r store.AuditRecord) (store.AuditRecord, error) {
	r.Time = r.Time.UTC().Truncate(time.Microsecond)
	identity, err := json.Marshal(auditIdentity{Verified: r.CallerVerified, Subject: r.CallerSubject, CN: r.CallerCN,
		OU: r.CallerOU, DNS: r.CallerDNS, URIs: r.CallerURIs, Addr: r.CallerAddr})
	if err != nil {
		return r, fmt.Errorf("sqlstore: append audit record of %s: identity: %w", r.Method, err)
	}
	if err := t.queryRow(ctx, `INSERT INTO audit_log
		(recorded_at, caller, identity, method, rack_ids, node_ids, job_ids, outcome, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		t.d.timeArg(r.Time), r.Caller, string(identity), r.Method, jsonList(r.RackIDs), jsonList(r.NodeIDs), jsonList(r.JobIDs),
		r.Outcome, r.Reason).Scan(&r.Seq); err != nil {
		return r, fmt.Errorf("sqlstore: append audit record of %s: %w", r.Method, err)
	}
	if err := t.insertAuditTargets(ctx, r.Seq, r.RackIDs, r.NodeIDs); err != nil {
		return r, fmt.Errorf("sqlstore: append audit record of %s: %w", r.Method, err)
	}
	return r, nil
}

// insertAuditTargets indexes record seq by each of its racks and nodes
// (each once), appendRowsPerStatement rows a statement: a batch of a
// thousand nodes takes five statements, not a thousand.
func (t *tx) insertAuditTargets(ctx context.Context, seq int64, racks, nodes []string) error {
	type target struct{ kind, id string }
	var rows []target
	for _, k := range []struct {
		kind string
		ids  []string
	}{{"rack", racks}, {"node", nodes}} {
		seen := make(map[string]bool, len(k.ids))
		for _, id := range k.ids {
			if !seen[id] {
				seen[id] = true
				rows = append(rows, target{k.kind, id})
			}
		}
	}
	for len(rows) > 0 {
		n := min(len(rows), appendRowsPerStatement)
		var q strings.Builder
		q.WriteString("INSERT INTO audit_target (seq, kind, id) VALUES ")
		args := make([]any, 0, 3*n)
		for i, row := range rows[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, seq, row.kind, row.id)
		}
		if _, err := t.exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("index %d targets: %w", n, err)
		}
		rows = rows[n:]
	}
	return nil
}

// ListAudit implements store.AuditLog, within the store's read deadline.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	return view(ctx, s, func(t *tx) ([]store.AuditRecord, error) { return t.listAudit(ctx, f) })
}

func (t *tx) listAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	query := `SELECT seq, recorded_at, caller, identity, method, rack_ids, node_ids, job_ids, outcome, reason
		FROM audit_log WHERE 1 = 1`
	var args []any
	if f.RackID != "" {
		query += ` AND seq IN (SELECT seq FROM audit_target WHERE kind = 'rack' AND id = ?)`
		args = append(args, f.RackID)
	}
	if f.NodeID != "" {
		query += ` AND seq IN (SELECT seq FROM audit_target WHERE kind = 'node' AND id = ?)`
		args = append(args, f.NodeID)
	}
	if !f.Since.IsZero() {
		query += ` AND recorded_at >= ?`
		args = append(args, t.d.timeArg(f.Since.UTC().Truncate(time.Microsecond)))
	}
	if f.BeforeSeq > 0 {
		query += ` AND seq < ?`
		args = append(args, f.BeforeSeq)
	}
	query += ` ORDER BY seq DESC`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list audit records: %w", err)
	}
	defer rows.Close()
	var out []store.AuditRecord
	for rows.Next() {
		var r store.AuditRecord
		var identity, racks, nodes, jobs string
		if err := rows.Scan(&r.Seq, timeCol{&r.Time}, &r.Caller, &identity, &r.Method, &racks, &nodes, &jobs,
			&r.Outcome, &r.Reason); err != nil {
			return nil, fmt.Errorf("sqlstore: list audit records: %w", err)
		}
		var id auditIdentity
		for _, col := range []struct {
			raw  string
			into any
		}{{identity, &id}, {racks, &r.RackIDs}, {nodes, &r.NodeIDs}, {jobs, &r.JobIDs}} {
			if err := json.Unmarshal([]byte(col.raw), col.into); err != nil {
				return nil, fmt.Errorf("sqlstore: list audit records: record %d: %w", r.Seq, err)
			}
		}
		r.CallerVerified, r.CallerSubject, r.CallerCN, r.CallerAddr = id.Verified, id.Subject, id.CN, id.Addr
		r.CallerOU, r.CallerDNS, r.CallerURIs = id.OU, id.DNS, id.URIs
		r.RackIDs, r.NodeIDs, r.JobIDs = nilIfEmpty(r.RackIDs), nilIfEmpty(r.NodeIDs), nilIfEmpty(r.JobIDs)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list audit records: %w", err)
	}
	return out, nil
}

// PruneAudit implements store.AuditLog, within the store's write deadline.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	cut := s.d.timeArg(before.UTC().Truncate(time.Microsecond))
	return write(ctx, s, func(t *tx) (int64, error) {
		if _, err := t.exec(ctx, `DELETE FROM audit_target WHERE seq IN (SELECT seq FROM audit_log WHERE recorded_at < ?)`, cut); err != nil {
			return 0, fmt.Errorf("sqlstore: prune audit records: %w", err)
		}
		res, err := t.exec(ctx, `DELETE FROM audit_log WHERE recorded_at < ?`, cut)
		if err != nil {
			return 0, fmt.Errorf("sqlstore: prune audit records: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("sqlstore: prune audit records: %w", err)
		}
		return n, nil
	})
}

// jsonList is ids as a JSON array, "[]" for none.
func jsonList(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	raw, _ := json.Marshal(ids) // a []string always encodes
	return string(raw)
}

func nilIfEmpty(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}

package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// RecordApply implements store.Catalog.
func (t *tx) RecordApply(ctx context.Context, r store.ApplyRecord) (store.ApplyRecord, error) {
	if err := r.Validate(); err != nil {
		return store.ApplyRecord{}, err
	}
	nodes := r.NodeIDs
	if nodes == nil {
		nodes = []string{}
	}
	nodeJSON, err := json.Marshal(nodes)
	if err != nil {
		return store.ApplyRecord{}, fmt.Errorf("sqlstore: record apply of %q: node ids: %w", r.ObjectID, err)
	}
	r.AppliedAt = t.now()
	if err := t.queryRow(ctx, `INSERT INTO firmware_apply_history
		(object_id, rack_id, node_ids, firmware_type, hardware_type, job_id, operation, requester, applied_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		r.ObjectID, r.RackID, string(nodeJSON), r.FirmwareType, r.HardwareType, r.JobID, r.Operation, r.Requester,
		t.d.timeArg(r.AppliedAt)).Scan(&r.Seq); err != nil {
		return store.ApplyRecord{}, fmt.Errorf("sqlstore: record apply of %q to rack %q: %w", r.ObjectID, r.RackID, err)
	}
	if len(r.NodeIDs) == 0 {
		r.NodeIDs = nil
	}
	return r, nil
}

// ListApplyHistory implements store.Catalog.
func (t *tx) ListApplyHistory(ctx context.Context, f store.HistoryFilter) ([]store.ApplyRecord, error) {
	query := `SELECT seq, object_id, rack_id, node_ids, firmware_type, hardware_type, job_id, operation, requester, applied_at
		FROM firmware_apply_history WHERE 1 = 1`
	var args []any
	if f.ObjectID != "" {
		query += ` AND object_id = ?`
		args = append(args, f.ObjectID)
	}
	if len(f.RackIDs) > 0 {
		query += ` AND rack_id IN (` + placeholders(len(f.RackIDs)) + `)`
		for _, id := range f.RackIDs {
			args = append(args, id)
		}
	}
	rows, err := t.query(ctx, query+` ORDER BY applied_at DESC, seq DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list apply history: %w", err)
	}
	defer rows.Close()
	var out []store.ApplyRecord
	for rows.Next() {
		var r store.ApplyRecord
		var nodeJSON string
		if err := rows.Scan(&r.Seq, &r.ObjectID, &r.RackID, &nodeJSON, &r.FirmwareType, &r.HardwareType,
			&r.JobID, &r.Operation, &r.Requester, timeCol{&r.AppliedAt}); err != nil {
			return nil, fmt.Errorf("sqlstore: list apply history: %w", err)
		}
		if err := json.Unmarshal([]byte(nodeJSON), &r.NodeIDs); err != nil {
			return nil, fmt.Errorf("sqlstore: list apply history: record %d: node ids: %w", r.Seq, err)
		}
		if len(r.NodeIDs) == 0 {
			r.NodeIDs = nil
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list apply history: %w", err)
	}
	return out, nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/store"
)

// objectColumns are the columns scanObject reads, from firmware_objects o
// joined with firmware_defaults d.
const objectColumns = `o.id, o.hardware_type, o.config_json, o.available, o.unavailable_reason, o.downloader,
	o.created_at, o.updated_at, d.object_id IS NOT NULL`

const objectsJoined = `firmware_objects o
	LEFT JOIN firmware_defaults d ON d.hardware_type = o.hardware_type AND d.object_id = o.id`

const artifactColumns = `a.object_id, a.name, a.location, a.sha256, a.firmware_type,
	a.state, a.local_path, a.error, a.updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanObject(row scanner) (store.FirmwareObject, error) {
	var o store.FirmwareObject
	err := row.Scan(&o.ID, &o.HardwareType, &o.ConfigJSON, &o.Available, &o.UnavailableReason, &o.Downloader,
		timeCol{&o.Created}, timeCol{&o.Updated}, &o.IsDefault)
	return o, err
}

// CreateFirmwareObject implements store.Catalog.
func (t *tx) CreateFirmwareObject(ctx context.Context, obj store.FirmwareObject) (store.FirmwareObject, error) {
	obj, err := obj.Validate()
	if err != nil {
		return store.FirmwareObject{}, err
	}
	now := t.now()
	res, err := t.exec(ctx, `INSERT INTO firmware_objects
		(id, hardware_type, config_json, available, unavailable_reason, downloader, created_at, updated_at, download_seen_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		obj.ID, obj.HardwareType, obj.ConfigJSON, obj.Available, obj.UnavailableReason, obj.Downloader,
		t.d.timeArg(now), t.d.timeArg(now), t.d.timeArg(now))
	if err != nil {
		return store.FirmwareObject{}, fmt.Errorf("sqlstore: create firmware object %q: %w", obj.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return store.FirmwareObject{}, fmt.Errorf("sqlstore: create firmware object %q: %w", obj.ID, err)
	} else if n == 0 {
		return store.FirmwareObject{}, fmt.Errorf("firmware object %q: %w", obj.ID, store.ErrExists)
	}
	for i := range obj.Artifacts {
		a := &obj.Artifacts[i]
		a.Updated = now
		if _, err := t.exec(ctx, `INSERT INTO firmware_artifacts
			(object_id, name, pos, location, sha256, firmware_type, state, local_path, error, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			obj.ID, a.Name, i, a.Location, a.SHA256, a.FirmwareType, string(a.State), a.LocalPath, a.Error, t.d.timeArg(now)); err != nil {
			return store.FirmwareObject{}, fmt.Errorf("sqlstore: create firmware object %q: artifact %q: %w", obj.ID, a.Name, err)
		}
	}
	if len(obj.Artifacts) == 0 {
		obj.Artifacts = nil
	}
	obj.IsDefault, obj.Created, obj.Updated = false, now, now
	return obj, nil
}

// GetFirmwareObject implements store.Catalog.
func (t *tx) GetFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	o, err := scanObject(t.queryRow(ctx, `SELECT `+objectColumns+` FROM `+objectsJoined+` WHERE o.id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return o, fmt.Errorf("firmware object %q: %w", id, store.ErrNotFound)
	case err != nil:
		return o, fmt.Errorf("sqlstore: get firmware object %q: %w", id, err)
	}
	arts, err := t.artifacts(ctx, `a.object_id = ?`, id)
	if err != nil {
		return o, fmt.Errorf("sqlstore: get firmware object %q: %w", id, err)
	}
	o.Artifacts = arts[id]
	return o, nil
}

// ListFirmwareObjects implements store.Catalog.
func (t *tx) ListFirmwareObjects(ctx context.Context, f store.ObjectFilter) ([]store.FirmwareObject, error) {
	var conds []string
	var args []any
	if f.OnlyAvailable {
		conds, args = append(conds, `o.available = ?`), append(args, true)
	}
	if f.HardwareType != "" {
		conds, args = append(conds, `o.hardware_type = ?`), append(args, f.HardwareType)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := t.query(ctx, `SELECT `+objectColumns+` FROM `+objectsJoined+where+
		` ORDER BY o.created_at DESC, o.seq DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list firmware objects: %w", err)
	}
	defer rows.Close()
	var out []store.FirmwareObject
	for rows.Next() {
		o, err := scanObject(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: list firmware objects: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list firmware objects: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	artCond := `a.object_id IN (SELECT o.id FROM firmware_objects o` + where + `)`
	arts, err := t.artifacts(ctx, artCond, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list firmware objects: %w", err)
	}
	for i := range out {
		out[i].Artifacts = arts[out[i].ID]
	}
	return out, nil
}

// artifacts reads the artifacts cond selects, by object id, each object's
// in the caller's order.
func (t *tx) artifacts(ctx context.Context, cond string, args ...any) (map[string][]store.Artifact, error) {
	rows, err := t.query(ctx, `SELECT `+artifactColumns+` FROM firmware_artifacts a WHERE `+cond+
		` ORDER BY a.object_id, a.pos`, args...)
	if err != nil {
		return nil, fmt.Errorf("read artifacts: %w", err)
	}
	defer rows.Close()
	out := map[string][]store.Artifact{}
	for rows.Next() {
		var objectID, state string
		var a store.Artifact
		if err := rows.Scan(&objectID, &a.Name, &a.Location, &a.SHA256, &a.FirmwareType,
			&state, &a.LocalPath, &a.Error, timeCol{&a.Updated}); err != nil {
			return nil, fmt.Errorf("read artifacts: %w", err)
		}
		a.State = store.ArtifactState(state)
		out[objectID] = append(out[objectID], a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read artifacts: %w", err)
	}
	return out, nil
}

// lockObject locks an object's row until the transaction ends, so that
// every write touching an object (and its artifacts and default) takes
// the object first: concurrent writes serialise on it in one order.
func (t *tx) lockObject(ctx context.Context, id string) error {
	var got string
	err := t.queryRow(ctx, `SELECT id FROM firmware_objects WHERE id = ?`+t.d.lockRow, id).Scan(&got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("firmware object %q: %w", id, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("sqlstore: lock firmware object %q: %w", id, err)
	}
	return nil
}

// DeleteFirmwareObject implements store.Catalog.
func (t *tx) DeleteFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	if err := t.lockObject(ctx, id); err != nil {
		return store.FirmwareObject{}, err
	}
	o, err := t.GetFirmwareObject(ctx, id)
	if err != nil {
		return o, err
	}
	// The foreign keys would cascade; deleting explicitly, children first,
	// does not depend on SQLite's per-connection foreign_keys setting.
	for _, q := range []string{
		`DELETE FROM firmware_defaults WHERE object_id = ?`,
		`DELETE FROM firmware_artifacts WHERE object_id = ?`,
		`DELETE FROM firmware_objects WHERE id = ?`,
	} {
		if _, err := t.exec(ctx, q, id); err != nil {
			return store.FirmwareObject{}, fmt.Errorf("sqlstore: delete firmware object %q: %w", id, err)
		}
	}
	return o, nil
}

// SetDefaultFirmwareObject implements store.Catalog. The default is one
// row per hardware type, replaced in one statement: there is no moment
// with two defaults, or none, whatever runs concurrently.
func (t *tx) SetDefaultFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	if err := t.lockObject(ctx, id); err != nil {
		return store.FirmwareObject{}, err
	}
	if _, err := t.exec(ctx, `INSERT INTO firmware_defaults (hardware_type, object_id)
		SELECT hardware_type, id FROM firmware_objects WHERE id = ?
		ON CONFLICT (hardware_type) DO UPDATE SET object_id = excluded.object_id`, id); err != nil {
		return store.FirmwareObject{}, fmt.Errorf("sqlstore: set default firmware object %q: %w", id, err)
	}
	return t.GetFirmwareObject(ctx, id)
}

// DefaultFirmwareObject implements store.Catalog.
func (t *tx) DefaultFirmwareObject(ctx context.Context, hardwareType string) (store.FirmwareObject, error) {
	var id string
	err := t.queryRow(ctx, `SELECT object_id FROM firmware_defaults WHERE hardware_type = ?`, hardwareType).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.FirmwareObject{}, fmt.Errorf("default firmware object of hardware type %q: %w", hardwareType, store.ErrNotFound)
	case err != nil:
		return store.FirmwareObject{}, fmt.Errorf("sqlstore: default firmware object of hardware type %q: %w", hardwareType, err)
	}
	return t.GetFirmwareObject(ctx, id)
}

// SetObjectAvailability implements store.Catalog.
func (t *tx) SetObjectAvailability(ctx context.Context, id string, available bool, reason string) error {
	if available && reason != "" {
		return fmt.Errorf("firmware object %q: available with an unavailability reason: %w", id, store.ErrInvalid)
	}
	if err := t.lockObject(ctx, id); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `UPDATE firmware_objects SET available = ?, unavailable_reason = ?, updated_at = ? WHERE id = ?`,
		available, reason, t.d.timeArg(t.now()), id); err != nil {
		return fmt.Errorf("sqlstore: set availability of firmware object %q: %w", id, err)
	}
	return nil
}

// SetArtifactStatus implements store.Catalog.
func (t *tx) SetArtifactStatus(ctx context.Context, objectID, name string, status store.ArtifactStatus) error {
	status, err := status.Validate()
	if err != nil {
		return fmt.Errorf("firmware object %q: artifact %q: %w", objectID, name, err)
	}
	if err := t.lockObject(ctx, objectID); err != nil {
		return err
	}
	now := t.d.timeArg(t.now())
	res, err := t.exec(ctx, `UPDATE firmware_artifacts SET state = ?, local_path = ?, error = ?, updated_at = ?
		WHERE object_id = ? AND name = ?`, string(status.State), status.LocalPath, status.Error, now, objectID, name)
	if err != nil {
		return fmt.Errorf("sqlstore: set status of artifact %q of firmware object %q: %w", name, objectID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlstore: set status of artifact %q of firmware object %q: %w", name, objectID, err)
	} else if n == 0 {
		return fmt.Errorf("firmware object %q: artifact %q: %w", objectID, name, store.ErrNotFound)
	}
	if _, err := t.exec(ctx, `UPDATE firmware_objects SET updated_at = ? WHERE id = ?`, now, objectID); err != nil {
		return fmt.Errorf("sqlstore: set status of artifact %q of firmware object %q: %w", name, objectID, err)
	}
	return nil
}

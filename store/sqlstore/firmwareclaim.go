package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Taking over the interrupted firmware downloads of a cluster member that
// is gone: the download's heartbeat (firmware_objects.download_seen_at,
// stamped with the store's clock) and a compare-and-set of its downloader.
// The same statements run on both engines; SQLite's cluster_member table
// is always empty (no cluster shares a SQLite store).

// TouchFirmwareDownloads implements store.Catalog.
func (t *tx) TouchFirmwareDownloads(ctx context.Context, downloader string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{t.d.timeArg(t.now()), downloader}
	for _, id := range ids {
		args = append(args, id)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	if _, err := t.exec(ctx, `UPDATE firmware_objects SET download_seen_at = ? WHERE downloader = ? AND id IN (`+marks+`)`, args...); err != nil {
		return fmt.Errorf("sqlstore: stamp the heartbeat of %d firmware downloads of %q: %w", len(ids), downloader, err)
	}
	return nil
}

// ClaimFirmwareDownload implements store.Catalog. One UPDATE is the
// compare-and-set: on PostgreSQL a claim that waited for a concurrent one
// re-checks the object's row as that one left it (downloader no longer
// from) and moves nothing; SQLite runs one write at a time.
func (t *tx) ClaimFirmwareDownload(ctx context.Context, id, from, to string, quiet time.Duration) (bool, error) {
	switch {
	case quiet <= 0:
		return false, fmt.Errorf("firmware object %q: claim its download after %v: must be positive: %w", id, quiet, store.ErrInvalid)
	case to == "" || to == from:
		return false, fmt.Errorf("firmware object %q: claim its download from %q for %q: %w", id, from, to, store.ErrInvalid)
	}
	now := t.now()
	cutoff := t.d.timeArg(now.Add(-quiet))
	res, err := t.exec(ctx, `UPDATE firmware_objects SET downloader = ?, download_seen_at = ?, updated_at = ?
		WHERE id = ? AND downloader = ? AND available = ? AND unavailable_reason = '' AND download_seen_at <= ?
			AND NOT EXISTS (SELECT 1 FROM cluster_member WHERE member_id = ? AND updated_at > ?)`,
		to, t.d.timeArg(now), t.d.timeArg(now), id, from, false, cutoff, from, cutoff)
	if err != nil {
		return false, fmt.Errorf("sqlstore: claim the download of firmware object %q from %q: %w", id, from, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: claim the download of firmware object %q from %q: %w", id, from, err)
	}
	return n == 1, nil
}

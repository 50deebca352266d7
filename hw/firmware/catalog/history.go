package catalog

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// HistoryRecord is an apply-history record as GetFirmwareObjectHistory
// answers it.
type HistoryRecord struct {
	store.ApplyRecord
	// FirmwareAvailable is computed when the history is read: whether an
	// object with the record's id is in the catalog now (rms-spec §2.5).
	// Ids are reused after a delete, so it may be a later object of the
	// same id.
	FirmwareAvailable bool
}

// History returns the apply records f selects, newest first. Only the
// ApplyStored* RPCs write them.
func (s *Service) History(ctx context.Context, f store.HistoryFilter) ([]HistoryRecord, error) {
	recs, err := s.store.ListApplyHistory(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("catalog: read the apply history: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	objs, err := s.store.ListFirmwareObjects(ctx, store.ObjectFilter{})
	if err != nil {
		return nil, fmt.Errorf("catalog: read the apply history: %w", err)
	}
	present := make(map[string]bool, len(objs))
	for _, o := range objs {
		present[o.ID] = true
	}
	out := make([]HistoryRecord, len(recs))
	for i, r := range recs {
		out[i] = HistoryRecord{ApplyRecord: r, FirmwareAvailable: present[r.ObjectID]}
	}
	return out, nil
}

package sim

import (
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/sim/overlap"
)

// newOverlapRecorder is the fleet's recorder of mutating requests; it logs
// every overlap it finds as an error.
func newOverlapRecorder(log zerolog.Logger) *overlap.Recorder {
	return overlap.New(func(o overlap.Overlap) {
		log.Error().Str("device", o.Device).Str("holder", o.Holders[0]).Str("other_holder", o.Holders[1]).
			Msg("simulator: two holders acted on one device at the same time")
	})
}

// Overlaps returns how many pairs of holders (jobs or operation leases)
// acted on one device at the same time so far, across the fleet's BMCs
// and NVOS hosts (see package overlap).
func (f *Fleet) Overlaps() int { return f.overlaps.Count() }

// UnattributedRequests returns how many mutating requests reached the
// fleet without naming their holder.
func (f *Fleet) UnattributedRequests() int { return f.overlaps.Unattributed() }

// OverlapRecorder is the fleet's recorder, for tests that inspect which
// holders acted on a device.
func (f *Fleet) OverlapRecorder() *overlap.Recorder { return f.overlaps }

// logOverlaps writes the fleet's overlap count, once it has closed.
func (f *Fleet) logOverlaps() {
	ev := f.opts.Logger.Info()
	if n := f.Overlaps(); n > 0 {
		ev = f.opts.Logger.Error()
	}
	ev.Int("overlaps", f.Overlaps()).Int("unattributed_requests", f.UnattributedRequests()).
		Msg("simulator closed: holders that acted on one device at the same time")
}

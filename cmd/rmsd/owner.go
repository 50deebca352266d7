package main

import (
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/store/sqlstore"
)

// ownershipLogger reports the changes of the store's ownership: losing the
// lock and finding the store taken over are errors (new jobs are refused
// meanwhile, by the job journal that cannot write); taking it back is a
// warning, since jobs were refused until then.
func ownershipLogger(log zerolog.Logger) func(sqlstore.OwnershipChange) {
	return func(c sqlstore.OwnershipChange) {
		h := c.Holder
		switch c.Kind {
		case sqlstore.OwnershipLost:
			log.Error().Err(c.Err).Int64("epoch", h.Epoch).
				Msg("store ownership lost: the connection holding the store's lock failed; writes and new jobs are refused until this rmsd holds it again")
		case sqlstore.OwnershipRegained:
			log.Warn().Int64("epoch", h.Epoch).
				Msg("store ownership taken back under a new epoch; nobody else held the store meanwhile, so new jobs are accepted again")
		case sqlstore.OwnershipTakenOver:
			log.Error().Str("holder_host", h.Host).Int("holder_pid", h.PID).Time("holder_since", h.Since).Int64("holder_epoch", h.Epoch).
				Msg("store taken over by another rmsd while this one had lost its lock: this rmsd never writes to it again; stop it")
		}
	}
}

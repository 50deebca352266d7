package download

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// unknownSizeStep is how often the progress of a body of unknown length
// is logged.
const unknownSizeStep = 256 << 20

// progress logs a transfer every 10 % (every 256 MiB when the size is
// unknown). It is an io.Writer fed with every byte written.
type progress struct {
	log     zerolog.Logger
	total   int64 // -1 when unknown
	start   time.Time
	written int64
	logged  int64 // last percentage (or step) logged
	// received, when set, counts the bytes across every transfer.
	received *atomic.Int64
}

func (p *progress) Write(b []byte) (int, error) {
	p.written += int64(len(b))
	if p.received != nil {
		p.received.Add(int64(len(b)))
	}
	if p.total > 0 {
		pct := min(p.written*100/p.total, 100) / 10 * 10
		if pct > p.logged {
			p.logged = pct
			p.log.Info().Int64("percent", pct).Int64("downloaded_bytes", p.written).Int64("total_bytes", p.total).
				Dur("elapsed_ms", time.Since(p.start)).Msg("artifact download progress")
		}
		return len(b), nil
	}
	if step := p.written / unknownSizeStep; step > p.logged {
		p.logged = step
		p.log.Info().Int64("downloaded_bytes", p.written).Dur("elapsed_ms", time.Since(p.start)).
			Msg("artifact download progress")
	}
	return len(b), nil
}

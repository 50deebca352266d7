// Package pause is the one wait every workflow and device step uses
// between two tries: a pause that ends early, with the context's error,
// when the job is cancelled or rmsd shuts down. No workflow calls
// time.Sleep.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, whichever comes first. It returns
// ctx.Err() when ctx ended (at once for d <= 0 on an ended ctx), nil
// otherwise.
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

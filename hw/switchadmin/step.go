package switchadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
)

// Deps are what every workflow of the package needs.
type Deps struct {
	// Nodes runs each device step.
	Nodes *nodeops.Runner
	// Timing bounds the waits; zero fields take the defaults.
	Timing Timing
}

// errWaitTimeout marks a wait that ran out of time.
var errWaitTimeout = errors.New("switchadmin: timed out")

// step runs one device step on n's switch adapter through the node runner.
func (d Deps) step(ctx context.Context, n hw.Node, f func(ctx context.Context, a platform.SwitchAdmin) error) error {
	return d.Nodes.One(ctx, n, func(ctx context.Context, _ int, dev platform.Device) error {
		a, ok := dev.(platform.SwitchAdmin)
		if !ok {
			return fmt.Errorf("%s: %w: not an NVOS switch", n.ID, hw.ErrUnsupported)
		}
		return f(ctx, a)
	})
}

// every calls try at once and then every interval until it reports done,
// fails, ctx ends or timeout passes (errWaitTimeout, with try's last error).
func every(ctx context.Context, interval, timeout time.Duration, try func() (done bool, err error)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTimer(0)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline.C:
			if last != nil {
				return fmt.Errorf("%w after %s (last error: %v)", errWaitTimeout, timeout, last)
			}
			return fmt.Errorf("%w after %s", errWaitTimeout, timeout)
		case <-tick.C:
		}
		done, err := try()
		if done {
			return err
		}
		last = err
		tick.Reset(interval)
	}
}

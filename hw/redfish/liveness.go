package redfish

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AuxPowerCycle posts {"ResetType":"AuxPowerCycle"} to the first chassis
// advertising Oem #NvidiaChassis.AuxPowerReset. The BMC goes away while
// auxiliary power cycles; follow with WaitDownUp or WaitPowerState.
func (c *Client) AuxPowerCycle(ctx context.Context) error {
	uris, err := c.members(ctx, "/redfish/v1/Chassis")
	if err != nil {
		return fmt.Errorf("aux power cycle: list chassis: %w", err)
	}
	for _, u := range uris {
		var ch chassis
		if err := c.get(ctx, u, &ch); err != nil {
			return fmt.Errorf("aux power cycle: %w", err)
		}
		act, ok := ch.Actions.find("#NvidiaChassis.AuxPowerReset", true)
		if !ok {
			continue
		}
		if _, err := c.send(ctx, "POST", act.Target, map[string]string{"ResetType": string(ResetAuxPowerCycle)}, nil); err != nil {
			return fmt.Errorf("aux power cycle: %w", err)
		}
		return nil
	}
	return fmt.Errorf("aux power cycle: no chassis advertises #NvidiaChassis.AuxPowerReset: %w", ErrActionUnavailable)
}

// Alive probes GET /redfish/v1 once within ProbeTimeout. When nothing at
// the BMC's address answered before the probe timed out, the error matches
// ErrNoAnswer (and ErrTimeout).
func (c *Client) Alive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.pool.opts.ProbeTimeout)
	defer cancel()
	var t answerTrace
	_, err := c.ServiceRoot(t.with(ctx))
	return t.classify(err)
}

// poll calls probe now and then every LivenessInterval until it reports
// done or LivenessTimeout passes.
func (c *Client) poll(ctx context.Context, what string, probe func(context.Context) bool) error {
	o := c.pool.opts
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.LivenessTimeout)
	defer cancel()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return waitEnded(what, parent, ctx)
		case <-timer.C:
		}
		if probe(ctx) {
			return nil
		}
		timer.Reset(o.LivenessInterval)
	}
}

// WaitDownUp waits for the BMC to go away and come back: it must see at
// least one failed probe of /redfish/v1 followed by a successful one. A
// BMC that never goes down within LivenessTimeout is a timeout, because
// then the reset it follows did not happen.
func (c *Client) WaitDownUp(ctx context.Context) error {
	seenDown := false
	return c.poll(ctx, "wait for bmc restart", func(ctx context.Context) bool {
		err := c.Alive(ctx)
		if err != nil {
			seenDown = true
			return false
		}
		return seenDown
	})
}

// WaitUp waits until /redfish/v1 answers.
func (c *Client) WaitUp(ctx context.Context) error {
	return c.poll(ctx, "wait for bmc", func(ctx context.Context) bool { return c.Alive(ctx) == nil })
}

// WaitPowerState polls System_0 until it reports want; read errors (a BMC
// rebooting) are tolerated until LivenessTimeout.
func (c *Client) WaitPowerState(ctx context.Context, want PowerState) error {
	return c.poll(ctx, "wait for power "+string(want), func(ctx context.Context) bool {
		pctx, cancel := context.WithTimeout(ctx, c.pool.opts.ProbeTimeout)
		defer cancel()
		got, err := c.SystemPowerState(pctx)
		return err == nil && got == want
	})
}

// RestartManagerAndWait resets the first manager advertising #Manager.Reset
// (GracefulRestart, or ForceRestart when force) and waits for the BMC to go
// down and come back; that is how a power shelf activates staged firmware.
// If the reset POST itself fails at transport level the BMC may already be
// restarting, so the down/up wait decides.
func (c *Client) RestartManagerAndWait(ctx context.Context, force bool) error {
	rt := ResetGracefulRestart
	if force {
		rt = ResetForceRestart
	}
	if err := c.ResetManager(ctx, "", rt); err != nil && !isTransport(err) {
		return fmt.Errorf("restart manager: %w", err)
	}
	if err := c.WaitDownUp(ctx); err != nil {
		return fmt.Errorf("restart manager: %w", err)
	}
	return nil
}

// waitEnded reports why a wait stopped: the caller cancelled (its error as
// is) or a deadline passed (ErrTimeout).
func waitEnded(what string, parent, ctx context.Context) error {
	if errors.Is(parent.Err(), context.Canceled) {
		return fmt.Errorf("%s: %w", what, parent.Err())
	}
	return fmt.Errorf("%s: %w: %w", what, ErrTimeout, ctx.Err())
}

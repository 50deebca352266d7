// Package spdm collects fresh SPDM attestation evidence from one NVLink
// switch tray (southbound "SPDM flow"): it discovers the switch's SPDM
// components, then, one component at a time, has it generate evidence
// bound to the caller's nonce, follows that action to its end and reads
// the measurements and certificate chain.
//
// It owns no clients, holds no lock on the switch and keeps nothing: the
// evidence is the caller's to return, and it is never logged. It does not
// appraise evidence either. A component that fails does not stop the
// others; a batch deadline (BatchContext) that passes keeps the evidence
// already collected and marks the component under way and those not
// attempted as timed out.
package spdm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw/platform"
)

// NonceSize is the length of the nonce every collection is bound to.
const NonceSize = 32

// ErrDeadline is the cause of a batch context whose deadline passed.
var ErrDeadline = errors.New("spdm: batch deadline reached")

// Timing bounds a collection. Zero fields take the defaults.
type Timing struct {
	// Deadline bounds a whole batch (default 15 min).
	Deadline time.Duration
	// PollInterval is how often a generation action is read (default 1 s).
	PollInterval time.Duration
	// GenerationTimeout bounds one component's generation (default 2 min).
	GenerationTimeout time.Duration
}

// withDefaults fills the zero fields.
func (t Timing) withDefaults() Timing {
	if t.Deadline <= 0 {
		t.Deadline = 15 * time.Minute
	}
	if t.PollInterval <= 0 {
		t.PollInterval = time.Second
	}
	if t.GenerationTimeout <= 0 {
		t.GenerationTimeout = 2 * time.Minute
	}
	return t
}

// BatchContext is ctx bounded by the batch deadline, with ErrDeadline as
// its cause once that passes.
func BatchContext(ctx context.Context, t Timing) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, t.withDefaults().Deadline, ErrDeadline)
}

// Component is the outcome of one SPDM component.
type Component struct {
	ID string
	// Err is why the component has no evidence; nil on success.
	Err error
	// TimedOut marks a component the batch deadline cut short or never
	// reached.
	TimedOut bool
	// Measurements and Certificates are the evidence as normalised JSON,
	// set only on success.
	Measurements, Certificates []byte
}

// Target is the outcome of one switch.
type Target struct {
	// Err is a failure before any component was tried (discovery, or the
	// deadline passing first); with Components, a summary of theirs.
	Err        error
	Components []Component
	// Finished is when the collection ended.
	Finished time.Time
}

// Failed reports whether the target or any of its components failed.
func (t Target) Failed() bool { return t.Err != nil }

// Collect gathers the evidence of every SPDM component of sw, serially,
// bound to nonce. ctx should come from BatchContext.
func Collect(ctx context.Context, sw platform.SwitchSpdm, nonce []byte, t Timing) Target {
	t = t.withDefaults()
	ids, err := sw.SpdmComponents(ctx)
	if err != nil {
		if DeadlinePassed(ctx) {
			err = ErrDeadline
		}
		return Target{Err: fmt.Errorf("discover SPDM components: %w", err), Finished: time.Now()}
	}
	out := Target{Components: make([]Component, len(ids))}
	failed := 0
	for i, id := range ids {
		c := Component{ID: id}
		if DeadlinePassed(ctx) {
			c.Err, c.TimedOut = fmt.Errorf("not attempted: %w", ErrDeadline), true
		} else {
			c.Measurements, c.Certificates, c.Err = collectOne(ctx, sw, id, nonce, t)
			if c.Err != nil && DeadlinePassed(ctx) {
				c.Err, c.TimedOut = fmt.Errorf("interrupted: %w", ErrDeadline), true
			}
		}
		if c.Err != nil {
			failed++
		}
		out.Components[i] = c
	}
	if failed > 0 {
		out.Err = fmt.Errorf("%d of %d SPDM components failed", failed, len(ids))
	}
	out.Finished = time.Now()
	return out
}

// DeadlinePassed reports whether ctx (from BatchContext) ended because
// the batch deadline passed.
func DeadlinePassed(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrDeadline)
}

// collectOne generates and reads one component's evidence.
func collectOne(ctx context.Context, sw platform.SwitchSpdm, id string, nonce []byte, t Timing) ([]byte, []byte, error) {
	action, err := sw.StartSpdmGeneration(ctx, id, nonce)
	if err != nil {
		return nil, nil, fmt.Errorf("generate: %w", err)
	}
	if err := waitGeneration(ctx, sw, action, t); err != nil {
		return nil, nil, fmt.Errorf("generate: %w", err)
	}
	m, certs, err := sw.SpdmEvidence(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("read evidence: %w", err)
	}
	return m, certs, nil
}

// ErrGenerationTimeout is a generation that did not end within
// Timing.GenerationTimeout.
var ErrGenerationTimeout = errors.New("spdm: evidence generation timed out")

// waitGeneration reads the action at once and then every PollInterval
// until it ends, for at most GenerationTimeout.
func waitGeneration(ctx context.Context, sw platform.SwitchSpdm, action string, t Timing) error {
	limit := time.NewTimer(t.GenerationTimeout)
	defer limit.Stop()
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-limit.C:
			return fmt.Errorf("action %s: %w after %s", action, ErrGenerationTimeout, t.GenerationTimeout)
		case <-tick.C:
		}
		done, err := sw.SpdmGenerationDone(ctx, action)
		if err != nil || done {
			return err
		}
		tick.Reset(t.PollInterval)
	}
}

package platform

// PowerSeen is told of every power state rmsd learns about a node through
// its platform adapter: a state a read returned (Unknown when the device
// did not answer) and the state a power change it sent leads to. It runs on
// the caller's goroutine, so it must be cheap and never block.
type PowerSeen func(rackID, nodeID string, st PowerState)

// powerNote is embedded by the adapters to report power states.
type powerNote struct {
	seen         PowerSeen
	rack, nodeID string
}

// setPowerSeen is how New hands the adapter Deps.PowerSeen.
func (p *powerNote) setPowerSeen(fn PowerSeen, c Config) {
	p.seen, p.rack, p.nodeID = fn, c.RackID, c.ID
}

// read reports the outcome of a power read.
func (p *powerNote) read(st PowerState, err error) {
	if p.seen == nil {
		return
	}
	if err != nil {
		st = PowerStateUnknown
	}
	p.seen(p.rack, p.nodeID, st)
}

// set reports a power change the device accepted.
func (p *powerNote) set(op PowerOp) {
	if p.seen == nil {
		return
	}
	if st, ok := stateAfter(op); ok {
		p.seen(p.rack, p.nodeID, st)
	}
}

// stateAfter is the state a power operation leaves a node in once done
// (false for an NMI, which changes none).
func stateAfter(op PowerOp) (PowerState, bool) {
	switch op {
	case PowerOn, PowerForceOn, PowerCycle, PowerGracefulRestart, PowerForceRestart:
		return PowerStateOn, true
	case PowerOff, PowerForceOff, PowerGracefulShutdown:
		return PowerStateOff, true
	default:
		return "", false
	}
}

// powerReporter is implemented by the adapters that read or change power.
type powerReporter interface {
	setPowerSeen(fn PowerSeen, c Config)
}

package sim

import "errors"

// Sentinel errors of the simulator.
var (
	// ErrInvalidOptions means Options could not describe a fleet.
	ErrInvalidOptions = errors.New("sim: invalid options")
	// ErrClosed means the fleet or device was already closed.
	ErrClosed = errors.New("sim: closed")
	// ErrUnknownComponent means a firmware component id does not exist.
	ErrUnknownComponent = errors.New("sim: unknown firmware component")
	// ErrNotShelf means a power-shelf knob was used on another device.
	ErrNotShelf = errors.New("sim: not a power shelf")
)

package hw

import "errors"

// ErrUnsupported is returned when a node type has no implementation of the
// requested operation. It is never a silent no-op.
var ErrUnsupported = errors.New("hw: operation not supported for this node type")

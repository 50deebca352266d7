package coldreboot

import (
	"errors"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/messages"
)

// classify maps a stage failure to the job error code callers see.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, errStageTimeout), errors.Is(err, redfish.ErrTimeout), errors.Is(err, nvue.ErrTimeout):
		return messages.ErrorTimeout
	case errors.Is(err, redfish.ErrUnauthenticated), errors.Is(err, nvue.ErrUnauthorized):
		return messages.ErrorUnauthenticated
	case errors.Is(err, redfish.ErrServer), errors.Is(err, nvue.ErrServer):
		return messages.ErrorServerError
	case errors.Is(err, redfish.ErrInvalidResponse), errors.Is(err, nvue.ErrInvalidResponse):
		return messages.ErrorInvalidResponse
	case errors.Is(err, redfish.ErrNotFound), errors.Is(err, nvue.ErrNotFound):
		return messages.ErrorTargetNotFound
	case errors.Is(err, hw.ErrUnsupported):
		return messages.ErrorInvalidArgument
	case errors.Is(err, redfish.ErrUnreachable), errors.Is(err, redfish.ErrTransport), errors.Is(err, nvue.ErrTransport),
		errors.Is(err, redfish.ErrClient):
		return messages.ErrorClientError
	default:
		return messages.ErrorOther
	}
}

// gone reports whether a BMC probe found no power behind the address: the
// probe timed out with nothing answering (redfish.ErrNoAnswer). A refused
// connection is a reset sent by a powered network stack, and a DNS failure
// is a resolver outage that says nothing about the tray: neither counts as
// discharged, so the shelves stay off until the trays really are dark.
func gone(err error) bool { return errors.Is(err, redfish.ErrNoAnswer) }

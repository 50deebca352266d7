package fwupdate

import (
	"errors"
	"os"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// classify maps why an update stopped to the job error code callers see.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, errNoTargets):
		return messages.ErrorInvalidArgument
	case errors.Is(err, errInventoryMismatch), errors.Is(err, redfish.ErrPrecondition):
		return messages.ErrorFailedPrecondition
	case errors.Is(err, errNoFlasher), errors.Is(err, nicflash.ErrNoHost), errors.Is(err, nicflash.ErrIncompatible),
		errors.Is(err, nicflash.ErrHostTool), errors.Is(err, nicflash.ErrSudo), errors.Is(err, nicflash.ErrImage):
		return messages.ErrorFailedPrecondition
	case errors.Is(err, sshsftp.ErrAuth):
		return messages.ErrorUnauthenticated
	case errors.Is(err, nicflash.ErrNotReady), errors.Is(err, sshsftp.ErrTimeout):
		return messages.ErrorTimeout
	case errors.Is(err, sshsftp.ErrConnect), errors.Is(err, sshsftp.ErrHostKey):
		return messages.ErrorClientError
	case errors.Is(err, os.ErrNotExist):
		return messages.ErrorFileNotFound
	case errors.Is(err, errTaskTimeout), errors.Is(err, redfish.ErrTimeout):
		return messages.ErrorTimeout
	case errors.Is(err, redfish.ErrUnauthenticated):
		return messages.ErrorUnauthenticated
	case errors.Is(err, errNoTask), errors.Is(err, redfish.ErrInvalidResponse):
		return messages.ErrorInvalidResponse
	case errors.Is(err, redfish.ErrNotFound):
		return messages.ErrorTargetNotFound
	case errors.Is(err, hw.ErrUnsupported):
		return messages.ErrorInvalidArgument
	case errors.Is(err, redfish.ErrServer), errors.Is(err, redfish.ErrUnavailable):
		return messages.ErrorServerError
	case errors.Is(err, redfish.ErrUnreachable), errors.Is(err, redfish.ErrTransport),
		errors.Is(err, redfish.ErrClient), errors.Is(err, redfish.ErrForbidden), errors.Is(err, redfish.ErrConflict):
		return messages.ErrorClientError
	default:
		// errTaskFailed, errTaskLost, errVersionMismatch and the rest.
		return messages.ErrorOther
	}
}

package switchimage

import (
	"errors"
	"os"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// classify maps why an update stopped to the job error code callers see.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, errTimeout), errors.Is(err, nvue.ErrTimeout), errors.Is(err, sshsftp.ErrTimeout),
		errors.Is(err, sshsftp.ErrStalled):
		return messages.ErrorTimeout
	case errors.Is(err, nvue.ErrUnauthorized), errors.Is(err, sshsftp.ErrAuth):
		return messages.ErrorUnauthenticated
	case errors.Is(err, errNoNVOS):
		return messages.ErrorFailedPrecondition
	case errors.Is(err, os.ErrNotExist):
		return messages.ErrorFileNotFound
	case errors.Is(err, platform.ErrImageTooSmall), errors.Is(err, platform.ErrInvalidFirmwareUpdate),
		errors.Is(err, hw.ErrUnsupported):
		return messages.ErrorInvalidArgument
	case errors.Is(err, nvue.ErrServer):
		return messages.ErrorServerError
	case errors.Is(err, nvue.ErrInvalidResponse):
		return messages.ErrorInvalidResponse
	case errors.Is(err, nvue.ErrTransport), errors.Is(err, nvue.ErrRequest), errors.Is(err, sshsftp.ErrConnect):
		return messages.ErrorClientError
	default:
		return messages.ErrorOther
	}
}

package fwupdate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/hw/platform"
)

// errNoTask marks a device that accepted a package without naming the
// task that installs it.
var errNoTask = errors.New("the device accepted the package but named no task")

// upload sends a target's package to the node in one node operation; the
// device may answer that it already runs it (UpdateStart.Skipped).
func (r *run) upload(ctx context.Context, t *Target) (platform.UpdateStart, *stepError) {
	base := filepath.Base(t.File)
	r.job.Progress(fmt.Sprintf(ProgressUploading+"%s for target %s", base, t.label()))
	fail := func(err error) *stepError {
		return &stepError{phase: phaseUpdate, during: fmt.Sprintf("while uploading %s for target %s", base, t.label()), target: t,
			err: fmt.Errorf("upload %s for target %s: %w", base, t.label(), err)}
	}
	f, err := os.Open(t.File)
	if err != nil {
		return platform.UpdateStart{}, fail(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return platform.UpdateStart{}, fail(err)
	}
	if !info.Mode().IsRegular() {
		return platform.UpdateStart{}, fail(fmt.Errorf("%s is not a regular file: %w", base, os.ErrNotExist))
	}
	var start platform.UpdateStart
	err = r.deps.Nodes.One(ctx, r.plan.Node, func(ctx context.Context, _ int, d platform.Device) (err error) {
		start, err = d.StartFirmwareUpdate(ctx, platform.FirmwareUpdate{
			Component: t.Target, FileName: base, Body: f, Size: info.Size(), Force: r.plan.Force,
		})
		return err
	})
	switch {
	case err != nil:
		return platform.UpdateStart{}, fail(err)
	case !start.Skipped && start.TaskID == "":
		return platform.UpdateStart{}, fail(errNoTask)
	}
	return start, nil
}

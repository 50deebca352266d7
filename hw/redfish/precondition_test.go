package redfish_test

import (
	"errors"
	"testing"

	"github.com/rmsd/rmsd/hw/redfish"
)

func TestUpdatePreconditions(t *testing.T) {
	f := startFleet(t, oneCompute())
	dev := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), dev.Endpoint())
	ctx := testCtx(t)
	if err := c.CheckUpdatePreconditions(ctx); err != nil {
		t.Fatalf("idle tray: %v", err)
	}

	dev.SetWriteProtected(true)
	if err := c.CheckUpdatePreconditions(ctx); !errors.Is(err, redfish.ErrPrecondition) {
		t.Fatalf("write protected: err = %v, want ErrPrecondition", err)
	}
	dev.SetWriteProtected(false)

	dev.SetBackgroundCopy("InProgress")
	if err := c.CheckUpdatePreconditions(ctx); !errors.Is(err, redfish.ErrPrecondition) {
		t.Fatalf("background copy: err = %v, want ErrPrecondition", err)
	}
	dev.SetBackgroundCopy("")

	start, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{File: firmware("bmc.fwpkg", "v3")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckUpdatePreconditions(ctx); !errors.Is(err, redfish.ErrPrecondition) {
		t.Fatalf("task running: err = %v, want ErrPrecondition", err)
	}
	if _, err := c.WaitTask(ctx, start.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckUpdatePreconditions(ctx); err != nil {
		t.Fatalf("after the task: %v", err)
	}
}

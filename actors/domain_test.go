package actors

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

const bmc05 = "bmc 10.0.1.5:443"

// TestDeviceHeldUnderAnotherNameIsRefusedNamingTheHolder: a node named
// differently (another rack id, another node id) whose device is held is
// refused, by jobs, batch children and leases alike, naming the holder's
// rack, node and job; once the holder ends, the alias is free.
func TestDeviceHeldUnderAnotherNameIsRefusedNamingTheHolder(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	flash := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "rack-001", NodeID: "compute-05", Devices: []string{bmc05}}, g)
	want := "job already in progress for rack rack-001 node compute-05 (job_id " + flash.ID + ")"

	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "rack-900", NodeID: "compute-05", Devices: []string{bmc05}}, completes("Completed", ""), nil)
	if ref := refusal(t, err, messages.ErrNodeBusy); ref.Message != want {
		t.Fatalf("alias job refused with %q, want %q", ref.Message, want)
	}
	rep := mustLease(t, e, messages.AcquireLease{Operation: "BatchSetPowerState", Partial: true, Nodes: []messages.NodeRef{
		{RackID: "rack-900", NodeID: "alias", Devices: []string{bmc05}},
		{RackID: "rack-900", NodeID: "other", Devices: []string{"bmc 10.0.1.6:443"}},
	}})
	if rep.Refused[0] == nil || rep.Refused[0].Message != want || rep.Refused[1] != nil {
		t.Fatalf("partial lease with an alias: %+v", rep.Refused)
	}
	batch, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "rack-900"},
		[]messages.BatchTarget{{RackID: "rack-900", NodeID: "alias", Devices: []string{bmc05}, Workflow: completes("Completed", "")}}, nil)
	if err != nil || len(batch.Rejected) != 1 || batch.Rejected[0].Message != want {
		t.Fatalf("batch child naming a held device: %+v, %v", batch.Rejected, err)
	}
	close(g.release)
	waitTerminal(t, e, flash.ID)
	free := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{{RackID: "rack-900", NodeID: "alias", Devices: []string{bmc05}}}})
	if free.Err != nil {
		t.Fatalf("the alias after the holder ended: %v", free.Err)
	}
}

// TestOneRequestNamingOneDeviceTwiceIsRefused: a reservation naming the
// same device under two node ids is refused as a duplicate target.
func TestOneRequestNamingOneDeviceTwiceIsRefused(t *testing.T) {
	e, _ := newEngine(t, Options{})
	_, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"}, completes("Completed", ""),
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{
			{RackID: "r", NodeID: "tray-1", Devices: []string{bmc05}},
			{RackID: "r", NodeID: "tray-1-again", Devices: []string{bmc05}},
		}})
	if ref := refusal(t, err, messages.ErrDuplicateTarget); !strings.Contains(ref.Message, "tray-1-again") || !strings.Contains(ref.Message, "node tray-1,") {
		t.Fatalf("refusal %q names neither node", ref.Message)
	}
}

// TestPowerDomainIsRefusedWhileAnyNodeOfTheRackIsHeld: a cold reboot (the
// domain by reservation) and a shelf power change (by lease) are refused
// while an unlisted node of the rack is held, naming its job; nodes of
// other racks do not count.
func TestPowerDomainIsRefusedWhileAnyNodeOfTheRackIsHeld(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	flash := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "tray-5"}, g)
	want := "job already in progress for rack r node tray-5 (job_id " + flash.ID + ")"
	_, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"}, completes("Completed", ""),
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{node("r", "tray-1"), node("r", "shelf-1")}})
	if ref := refusal(t, err, messages.ErrNodeBusy); ref.Message != want {
		t.Fatalf("cold reboot refused with %q, want %q", ref.Message, want)
	}
	shelf := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{{RackID: "r", NodeID: "shelf-1", PowerDomain: true}}})
	if shelf.Err == nil || shelf.Err.Error() != want {
		t.Fatalf("shelf OFF while a tray is held: %v", shelf.Err)
	}
	// A tray's own power change needs no domain: it is granted.
	tray := mustLease(t, e, messages.AcquireLease{ID: "tray", Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "tray-2")}})
	if tray.Err != nil {
		t.Fatalf("a tray's power change beside a flash: %v", tray.Err)
	}
	if other := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{{RackID: "r2", NodeID: "shelf-1", PowerDomain: true}}}); other.Err != nil {
		t.Fatalf("another rack's shelf: %v", other.Err)
	}
	close(g.release)
	waitTerminal(t, e, flash.ID)
	if err := e.Release(testCtx(t), "tray"); err != nil {
		t.Fatal(err)
	}
	if got := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{{RackID: "r", NodeID: "shelf-1", PowerDomain: true}}}); got.Err != nil {
		t.Fatalf("shelf OFF once the rack is free: %v", got.Err)
	}
}

// TestHeldPowerDomainRefusesEveryNodeOfTheRack: while a shelf power change
// holds the domain, no job, batch child or lease is granted on any node of
// the rack, each refusal naming the domain's holder; its own request may
// name more nodes of the rack, and other racks are untouched.
func TestHeldPowerDomainRefusesEveryNodeOfTheRack(t *testing.T) {
	e, _ := newEngine(t, Options{})
	shelf := mustLease(t, e, messages.AcquireLease{ID: "shelf-off", Operation: "BatchSetPowerState", Partial: true, Nodes: []messages.NodeRef{
		{RackID: "r", NodeID: "shelf-1", PowerDomain: true}, {RackID: "r", NodeID: "shelf-2", PowerDomain: true}, node("r", "tray-1"),
	}})
	if shelf.Err != nil || shelf.Refused[0] != nil || shelf.Refused[1] != nil || shelf.Refused[2] != nil {
		t.Fatalf("one request's shelves and tray: %+v %v", shelf.Refused, shelf.Err)
	}
	const want = "rack r is busy: BatchSetPowerState in progress; retry when it finishes"
	_, err := e.Create(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "tray-9"}, completes("Completed", ""), nil)
	if ref := refusal(t, err, messages.ErrRackBusy); ref.Message != want {
		t.Fatalf("job refused with %q", ref.Message)
	}
	batch, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r"},
		[]messages.BatchTarget{{RackID: "r", NodeID: "tray-9", Workflow: completes("Completed", "")}}, nil)
	if err != nil || len(batch.Rejected) != 1 || batch.Rejected[0].Message != want {
		t.Fatalf("batch child in the held domain: %+v, %v", batch.Rejected, err)
	}
	lease := mustLease(t, e, messages.AcquireLease{Operation: "BatchSetPowerState", Partial: true, Nodes: []messages.NodeRef{node("r", "tray-3"), node("r2", "tray-3")}})
	if lease.Refused[0] == nil || lease.Refused[0].Message != want || lease.Refused[1] != nil {
		t.Fatalf("partial lease across the held domain: %+v", lease.Refused)
	}
	if err := e.Release(testCtx(t), "shelf-off"); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "tray-9"}, completes("Completed", "")).ID)
}

// TestPartialLeaseRefusesOnlyTheShelfWhoseDomainIsBusy: in a batch, a shelf
// whose rack has a held node fails alone; the rest of the batch is granted.
func TestPartialLeaseRefusesOnlyTheShelfWhoseDomainIsBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	flash := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "tray-5"}, g)
	rep := mustLease(t, e, messages.AcquireLease{Operation: "BatchSetPowerState", Partial: true, Nodes: []messages.NodeRef{
		{RackID: "r", NodeID: "shelf-1", PowerDomain: true}, node("r", "tray-1"), {RackID: "r2", NodeID: "shelf-1", PowerDomain: true},
	}})
	if rep.Err != nil || rep.Refused[0] == nil || !errors.Is(rep.Refused[0], messages.ErrNodeBusy) || rep.Refused[1] != nil || rep.Refused[2] != nil {
		t.Fatalf("reply %+v %v", rep.Refused, rep.Err)
	}
	if !strings.Contains(rep.Refused[0].Message, flash.ID) {
		t.Fatalf("the shelf's refusal %q does not name the flash", rep.Refused[0].Message)
	}
	close(g.release)
	waitTerminal(t, e, flash.ID)
}

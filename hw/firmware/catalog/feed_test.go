package catalog_test

import (
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
)

// nextChange reads the next change, failing the test when none comes
// within waitTimeout or the subscription closes.
func nextChange(t *testing.T, sub *catalog.Subscription) catalog.Change {
	t.Helper()
	select {
	case c, ok := <-sub.C():
		if !ok {
			t.Fatalf("subscription closed (dropped %v)", sub.Dropped())
		}
		return c
	case <-time.After(waitTimeout):
		t.Fatalf("no change within %s", waitTimeout)
	}
	return catalog.Change{}
}

// closedWithin waits until the subscription's channel is closed, reading
// what is left; it fails the test when it is not closed in time.
func closedWithin(t *testing.T, sub *catalog.Subscription) int {
	t.Helper()
	n := 0
	deadline := time.After(waitTimeout)
	for {
		select {
		case _, ok := <-sub.C():
			if !ok {
				return n
			}
			n++
		case <-deadline:
			t.Fatalf("subscription not closed within %s", waitTimeout)
		}
	}
}

// TestFeed_TellsAnObjectsLifeInOrder: an object added, each of its
// artifacts downloading then ready, then available; another made the
// default; the first deleted. Each change arrives once, in the order the
// store recorded it.
func TestFeed_TellsAnObjectsLifeInOrder(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	sub := fx.svc.Subscribe(256)
	defer sub.Close()
	rel := fx.publish(simrelease.Options{})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})

	if c := nextChange(t, sub); c.Kind != catalog.ObjectAdded || c.ObjectID != rel.ID || c.HardwareType != "gb200-nvl" ||
		c.Available || !c.IsDefault {
		t.Fatalf("first change %+v, want %s added, unavailable, the default", c, rel.ID)
	}
	states := map[string][]store.ArtifactState{}
	for {
		c := nextChange(t, sub)
		if c.ObjectID != rel.ID {
			t.Fatalf("change of another object: %+v", c)
		}
		if c.Kind == catalog.AvailabilityChanged {
			if !c.Available {
				t.Fatalf("the release became unavailable: %+v", c)
			}
			break
		}
		if c.Kind != catalog.ArtifactChanged {
			t.Fatalf("change %+v before the availability", c)
		}
		states[c.Artifact] = append(states[c.Artifact], c.State)
	}
	if len(states) != len(rel.Artifacts()) {
		t.Fatalf("changes of %d artifacts, want %d: %v", len(states), len(rel.Artifacts()), states)
	}
	for name, seq := range states {
		if len(seq) != 2 || seq[0] != store.ArtifactDownloading || seq[1] != store.ArtifactReady {
			t.Errorf("artifact %s went %v, want downloading then ready", name, seq)
		}
	}
	if !fx.get(rel.ID).Available {
		t.Fatal("the availability was told before the store held it")
	}

	empty := fx.publish(simrelease.Options{Milestone: "2.0"})
	fx.add(catalog.AddRequest{ConfigJSON: empty.ConfigJSON, HardwareType: "gb200-nvl"})
	if c := nextChange(t, sub); c.Kind != catalog.ObjectAdded || c.ObjectID != empty.ID || c.IsDefault {
		t.Fatalf("second add: %+v", c)
	}
	if _, err := fx.svc.SetDefault(testCtx(t), empty.ID); err != nil {
		t.Fatal(err)
	}
	// The second release's download runs meanwhile: skip its changes.
	for c := nextChange(t, sub); ; c = nextChange(t, sub) {
		if c.Kind == catalog.DefaultChanged {
			if c.ObjectID != empty.ID || !c.IsDefault || c.HardwareType != "gb200-nvl" {
				t.Fatalf("default change %+v", c)
			}
			break
		}
		if c.ObjectID != empty.ID || (c.Kind != catalog.ArtifactChanged && c.Kind != catalog.AvailabilityChanged) {
			t.Fatalf("unexpected change %+v before the default", c)
		}
	}
	if err := fx.svc.Delete(testCtx(t), rel.ID); err != nil {
		t.Fatal(err)
	}
	for c := nextChange(t, sub); ; c = nextChange(t, sub) {
		if c.Kind == catalog.ObjectDeleted {
			if c.ObjectID != rel.ID || c.HardwareType != "gb200-nvl" {
				t.Fatalf("delete change %+v", c)
			}
			break
		}
		if c.ObjectID != empty.ID {
			t.Fatalf("unexpected change %+v before the delete", c)
		}
	}
}

// TestFeed_ASlowSubscriberIsDroppedAndTheDownloadGoesOn: a subscriber
// that reads nothing and has room for one change is dropped at the
// second, and the release still becomes available; a subscriber that
// reads keeps getting every change.
func TestFeed_ASlowSubscriberIsDroppedAndTheDownloadGoesOn(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	slow := fx.svc.Subscribe(1)
	defer slow.Close()
	reader := fx.svc.Subscribe(256)
	defer reader.Close()
	rel := fx.publish(simrelease.Options{})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	fx.waitObject(rel.ID, "available", available)

	if n := closedWithin(t, slow); n != 1 || !slow.Dropped() {
		t.Fatalf("slow subscriber: %d changes then closed, dropped %v; want 1 and dropped", n, slow.Dropped())
	}
	want := 1 + 2*len(rel.Artifacts()) + 1 // added, two states per artifact, available
	for range want {
		nextChange(t, reader)
	}
	if reader.Dropped() {
		t.Fatal("the reading subscriber was dropped")
	}
}

// TestFeed_CloseEndsASubscriptionAndTheServiceEndsThemAll: a closed
// subscription hears nothing more and is not dropped; Close twice is
// safe; closing the catalog closes the others; one taken afterwards
// comes back closed.
func TestFeed_CloseEndsASubscriptionAndTheServiceEndsThemAll(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	svc := fx.svc // fx.close forgets it
	gone := svc.Subscribe(16)
	gone.Close()
	gone.Close()
	if n := closedWithin(t, gone); n != 0 || gone.Dropped() {
		t.Fatalf("closed subscription: %d changes, dropped %v", n, gone.Dropped())
	}
	open := svc.Subscribe(256)
	rel := fx.publish(simrelease.Options{})
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	if c := nextChange(t, open); c.Kind != catalog.ObjectAdded {
		t.Fatalf("first change %+v", c)
	}
	fx.close()
	closedWithin(t, open)
	if open.Dropped() {
		t.Fatal("the catalog's Close counted as a drop")
	}
	open.Close() // after the service closed it: safe
	late := svc.Subscribe(1)
	if n := closedWithin(t, late); n != 0 {
		t.Fatalf("a subscription after Close got %d changes", n)
	}
}

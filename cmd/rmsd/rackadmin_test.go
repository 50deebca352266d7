package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/messages"
)

// TestRackAdminActsOnTheEnginesOfTheRacksTheMemberOwns: in cluster mode
// the admin service sees the engines of the racks the member owns now, as
// one: their actors listed together, an actor killed by the engine that
// supervises it, and nothing of a rack the member gave up.
func TestRackAdminActsOnTheEnginesOfTheRacksTheMemberOwns(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	a := newRackAdmin()
	engines := map[string]*actors.Engine{}
	for _, rack := range []string{"rack-1", "rack-2"} {
		e, err := actors.New(sys, actors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		engines[rack] = e
		a.add(rack, e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := a.Actors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var registries []string
	for _, info := range l.Actors {
		if info.Kind == "registry" {
			registries = append(registries, info.ID)
		}
	}
	if len(registries) != 2 || registries[0] == registries[1] {
		t.Fatalf("registries listed %v, want one per rack's engine", registries)
	}
	own, err := engines["rack-2"].Actors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rack2Registry := own.Actors[0].ID
	killed, err := a.Kill(ctx, actors.KillStop, rack2Registry)
	if err != nil || len(killed) != 1 || killed[0].ID != rack2Registry {
		t.Fatalf("Kill(rack-2's registry) = %v, %v", killed, err)
	}

	a.remove("rack-2", engines["rack-2"])
	if l, err = a.Actors(ctx); err != nil {
		t.Fatal(err)
	}
	for _, info := range l.Actors {
		if info.ID == rack2Registry {
			t.Errorf("rack-2's registry still listed after the rack left: %v", l.Actors)
		}
	}
	if _, err := a.Kill(ctx, actors.KillStop, "no-such-actor"); !errors.Is(err, actors.ErrUnknownActor) {
		t.Errorf("Kill(unknown) = %v, want ErrUnknownActor", err)
	}
	if _, err := a.CancelWith(ctx, "no-such-job", nil); !errors.Is(err, messages.ErrJobNotFound) {
		t.Errorf("CancelWith(unknown) = %v, want ErrJobNotFound", err)
	}
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rmsd/rmsd/grpc/adminpb"
)

// killer ends random engine actors through the admin service.
type killer struct {
	// admin returns the admin service to kill through this time (a
	// random member's in a cluster), or nil when none answers now.
	admin  func(*rand.Rand) adminpb.AdminClient
	rng    *rand.Rand
	total  int
	byKind map[string]int
}

// weights favour the actors that come and go with every job.
var victims = []string{"job", "job", "job", "lock", "lock", "lock", "batch", "registry"}

var modes = []adminpb.KillMode{adminpb.KillMode_KILL_MODE_STOP, adminpb.KillMode_KILL_MODE_POISON, adminpb.KillMode_KILL_MODE_CRASH}

// run kills until ctx ends.
func (k *killer) run(ctx context.Context, verbose bool) {
	for ctx.Err() == nil {
		kind := victims[k.rng.IntN(len(victims))]
		admin := k.admin(k.rng)
		if admin == nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		resp, err := admin.KillActors(ctx, &adminpb.KillActorsRequest{
			Kind: kind, Count: uint32(1 + k.rng.IntN(3)), Mode: modes[k.rng.IntN(len(modes))],
		})
		if err == nil {
			k.total += len(resp.GetKilled())
			k.byKind[kind] += len(resp.GetKilled())
		} else if verbose && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "chaos: kill %s: %v\n", kind, err)
		}
		pause(ctx, time.Duration(50+k.rng.IntN(250))*time.Millisecond)
	}
}

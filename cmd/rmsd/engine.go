package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmsserver"
)

// jobEngine is the daemon's view of the job engine.
type jobEngine interface {
	// Jobs is what the job-status RPCs read.
	Jobs() rmsserver.JobService
	// BeginShutdown refuses new jobs from now on.
	BeginShutdown()
	// Drain cancels running jobs, waits for them until ctx ends and stops
	// the engine.
	Drain(ctx context.Context) error
}

// startEngine starts the job engine. Until the engine lands this is an empty
// engine with no jobs.
func startEngine(*config.Config, zerolog.Logger) (jobEngine, error) {
	return noEngine{}, nil
}

type noEngine struct{}

func (noEngine) Jobs() rmsserver.JobService  { return nil }
func (noEngine) BeginShutdown()              {}
func (noEngine) Drain(context.Context) error { return nil }

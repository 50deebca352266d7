package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/messages"
)

func TestStartEngineServesJobReadsAndDrains(t *testing.T) {
	eng, err := startEngine(config.Default(), logging.Logger{Logger: zerolog.Nop()}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := eng.Jobs().Get(ctx, "unknown", false); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("get unknown job: %v", err)
	}
	eng.BeginShutdown()
	if err := eng.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
}

// Package logging builds rmsd's zerolog logger from [logging] and bridges
// protoactor-go's slog output into it. It only shapes log lines; it decides
// nothing about what the daemon does.
package logging

import (
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
)

// componentField names the subsystem that wrote a line.
const componentField = "component"

// Logger is rmsd's root logger plus the per-component levels of the
// log_level directive.
type Logger struct {
	zerolog.Logger
	levels config.LogLevels
}

// New builds the root logger writing to w: JSON lines by default, the
// human-readable console form when cfg.Format is "console".
func New(cfg config.Logging, w io.Writer) (Logger, error) {
	levels, err := config.ParseLogLevel(cfg.LogLevel)
	if err != nil {
		return Logger{}, err
	}
	if cfg.Format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, NoColor: true}
	}
	ctx := zerolog.New(w).With()
	if cfg.EnableTimestamps {
		ctx = ctx.Timestamp()
	}
	// The global level stays at trace: filtering is per logger, so tests and
	// several daemons in one process do not interfere.
	return Logger{Logger: ctx.Logger().Level(levels.Default), levels: levels}, nil
}

// Component returns a child logger tagged with component=name at the level
// the directive gives that component (or the default level).
func (l Logger) Component(name string) zerolog.Logger {
	lvl, ok := l.levels.Components[name]
	if !ok {
		lvl = l.levels.Default
	}
	return l.With().Str(componentField, name).Logger().Level(lvl)
}

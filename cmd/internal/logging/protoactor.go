package logging

import (
	"context"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// ActorSystemOption routes protoactor-go's slog output into the
// "protoactor" component logger (see protoactorHandler for how its records
// are adapted).
func (l Logger) ActorSystemOption() actor.ConfigOption {
	zl := l.Component("protoactor")
	return actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(protoactorHandler{next: zerolog.NewSlogHandler(zl)})
	})
}

// deadLetterMessage is the message of protoactor's dead-letter records.
const deadLetterMessage = "[DeadLetter]"

// protoactorHandler adapts protoactor's slog records to rmsd's lines:
//
//   - Dead letters are logged at debug. protoactor logs them at info whenever
//     a message reaches an actor that has stopped, which is ordinary: after
//     a job completes, the termination notice for its node lock may find the
//     lock already gone.
//   - Attributes named like the line's own fields are renamed
//     protoactor_<key>: protoactor logs an undeliverable message as
//     "message", which would give the line two "message" keys.
//   - The record's time is dropped, so that [logging] enable_timestamps
//     decides about timestamps here as on every other line.
type protoactorHandler struct {
	next slog.Handler
	// grouped is set inside a group, whose keys are prefixed and so cannot
	// collide.
	grouped bool
}

// Enabled implements slog.Handler.
func (h protoactorHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (h protoactorHandler) Handle(ctx context.Context, r slog.Record) error {
	level := r.Level
	if r.Message == deadLetterMessage && level > slog.LevelDebug {
		level = slog.LevelDebug
		if !h.next.Enabled(ctx, level) {
			return nil
		}
	}
	out := slog.NewRecord(time.Time{}, level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.rename(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h protoactorHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	renamed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		renamed[i] = h.rename(a)
	}
	return protoactorHandler{next: h.next.WithAttrs(renamed), grouped: h.grouped}
}

// WithGroup implements slog.Handler.
func (h protoactorHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return protoactorHandler{next: h.next.WithGroup(name), grouped: true}
}

// rename prefixes a top-level attribute whose key is one of the line's own
// fields.
func (h protoactorHandler) rename(a slog.Attr) slog.Attr {
	if h.grouped {
		return a
	}
	switch a.Key {
	case zerolog.MessageFieldName, slog.MessageKey, zerolog.LevelFieldName, zerolog.TimestampFieldName, componentField:
		a.Key = "protoactor_" + a.Key
	}
	return a
}

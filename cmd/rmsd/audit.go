package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/audit"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/auditrpc"
	"github.com/rmsd/rmsd/store"
)

// auditCloseWait bounds how long a shutdown waits for queued audit records
// to reach the store.
const auditCloseWait = 10 * time.Second

// auditLog is the running audit log: its recorder, the store it writes to
// (nil: the stream only) and the file it streams to, if any.
type auditLog struct {
	rec   *audit.Recorder
	store store.AuditLog
	file  *os.File
}

// startAudit starts the audit log per [audit]; nil when it is disabled.
func startAudit(cfg config.Audit, st store.Store, logger logging.Logger, stdout, stderr io.Writer) (*auditLog, error) {
	if !cfg.Enabled {
		logger.Warn().Msg("audit log disabled ([audit] enabled = false): mutating RPCs are not recorded")
		return nil, nil
	}
	a := &auditLog{}
	var stream zerolog.Logger
	switch cfg.Output {
	case config.AuditOutputLog:
		// At info whatever [logging] log_level says: records are never
		// filtered out.
		stream = logger.With().Str("component", "audit").Logger().Level(zerolog.InfoLevel)
	case "stdout":
		stream = zerolog.New(stdout).With().Timestamp().Logger()
	case "stderr":
		stream = zerolog.New(stderr).With().Timestamp().Logger()
	default:
		f, err := os.OpenFile(cfg.Output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit log: open output %s: %w", cfg.Output, err)
		}
		a.file = f
		stream = zerolog.New(f).With().Timestamp().Logger()
	}
	if cfg.Store {
		var ok bool
		if a.store, ok = st.(store.AuditLog); !ok {
			a.closeFile()
			return nil, fmt.Errorf("audit log: the %s store keeps no audit log", st.Info().Engine)
		}
	}
	a.rec = audit.New(audit.Options{
		Stream: stream, Log: logger.Component("audit"), Store: a.store,
		QueueSize: cfg.QueueSize, Retention: time.Duration(cfg.RetentionDays) * 24 * time.Hour,
	})
	logger.Info().Str("output", cfg.Output).Bool("store", cfg.Store).Int("retention_days", cfg.RetentionDays).Msg("audit log on")
	return a, nil
}

// interceptor audits the main server's mutating RPCs; none without an
// audit log.
func (a *auditLog) interceptor() []grpc.UnaryServerInterceptor {
	if a == nil {
		return nil
	}
	return []grpc.UnaryServerInterceptor{auditrpc.Unary(a.rec, auditrpc.Mutating)}
}

// adminInterceptor audits every admin-service call; none without an audit
// log.
func (a *auditLog) adminInterceptor() []grpc.UnaryServerInterceptor {
	if a == nil {
		return nil
	}
	return []grpc.UnaryServerInterceptor{auditrpc.Unary(a.rec, auditrpc.All)}
}

// auditStore is the store's audit log for the read service; nil when
// records are not stored.
func (a *auditLog) auditStore() store.AuditLog {
	if a == nil {
		return nil
	}
	return a.store
}

// dropped counts the records that never reached the store.
func (a *auditLog) dropped() uint64 {
	if a == nil {
		return 0
	}
	return a.rec.Dropped()
}

// close writes the queued records (for a while) and stops the recorder,
// then closes the output file. Call it once no RPC runs, before the store
// closes.
func (a *auditLog) close() {
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditCloseWait)
	defer cancel()
	a.rec.Close(ctx)
	a.closeFile()
}

func (a *auditLog) closeFile() {
	if a.file != nil {
		_ = a.file.Close()
	}
}

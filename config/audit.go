package config

import (
	"fmt"
	"strings"
)

// Audit configures the audit log (rmsd's own section): one record per
// mutating RPC of RackManager and RackManagerV2 and per admin-service call,
// with the caller's identity, the RPC, the rack, node and job ids and the
// outcome, never a credential. See docs/audit.md.
type Audit struct {
	// Enabled writes an audit record for every audited call; on by
	// default.
	Enabled bool `koanf:"enabled"`
	// Output is where the audit log stream goes: "log" (rmsd's own log,
	// each record a line with "stream":"audit", for a collector to route
	// by that field), "stdout", "stderr", or the path of a file the records
	// are appended to (created mode 0600), one JSON line each.
	Output string `koanf:"output"`
	// Store also writes every record to the store (SQLite or PostgreSQL)
	// for `rmsctl audit list` and the read service, asynchronously: an
	// unavailable store never fails or delays an RPC; a record that cannot
	// be queued or written is counted in rmsd_audit_records_dropped_total
	// and logged at warn (it is in the stream all the same).
	Store bool `koanf:"store"`
	// RetentionDays is how long the store keeps a record; older ones are
	// deleted every hour. 0 keeps them forever.
	RetentionDays int `koanf:"retention_days"`
	// QueueSize bounds the records waiting for the store.
	QueueSize int `koanf:"queue_size"`
}

// AuditOutputLog is Audit.Output's value for rmsd's own log.
const AuditOutputLog = "log"

func (a Audit) problems() []string {
	var p []string
	if strings.TrimSpace(a.Output) == "" {
		p = append(p, `audit.output: empty; want "log", "stdout", "stderr" or a file path`)
	}
	if a.RetentionDays < 0 {
		p = append(p, fmt.Sprintf("audit.retention_days: %d is negative (0 keeps records forever)", a.RetentionDays))
	}
	if a.QueueSize <= 0 {
		p = append(p, fmt.Sprintf("audit.queue_size: %d must be greater than 0", a.QueueSize))
	}
	return p
}

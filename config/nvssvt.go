package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// nvssvtProblems validates the [workflows] nvssvt_* keys. The executable
// itself is checked when rmsd starts, not here: loading reads no files
// but the configuration.
func (w Workflows) nvssvtProblems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if w.NVSSVTPath != "" && (strings.TrimSpace(w.NVSSVTPath) != w.NVSSVTPath || !filepath.IsAbs(w.NVSSVTPath)) {
		add("workflows.nvssvt_path: %q must be an absolute path (no shell or PATH lookup is involved)", w.NVSSVTPath)
	}
	if strings.TrimSpace(w.NVSSVTLogDir) == "" {
		add("workflows.nvssvt_log_dir: must not be empty")
	}
	if w.NVSSVTTimeoutSeconds <= 0 {
		add("workflows.nvssvt_timeout_seconds: must be greater than 0")
	}
	if w.NVSSVTMaxOutputBytes <= 0 || w.NVSSVTMaxOutputBytes > MaxNVSSVTOutputBytes {
		add("workflows.nvssvt_max_output_bytes: must be between 1 and %d", MaxNVSSVTOutputBytes)
	}
	if w.NVSSVTMaxConcurrent <= 0 || w.NVSSVTMaxConcurrent > MaxNVSSVTConcurrent {
		add("workflows.nvssvt_max_concurrent: must be between 1 and %d", MaxNVSSVTConcurrent)
	}
	return p
}

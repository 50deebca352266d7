package main

import (
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/rmsd/rmsd/config"
)

// applyGCPercent sets the garbage collector's target to [server]
// gc_percent, unless GOGC is set in environ: Go has applied it already,
// and the operator's explicit setting wins. It returns the setting in
// force, as GOGC spells it, and whether it came from the environment.
func applyGCPercent(cfg config.Server, environ []string) (gogc string, fromEnv bool) {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GOGC="); ok && v != "" {
			return v, true
		}
	}
	debug.SetGCPercent(cfg.GCPercent)
	return strconv.Itoa(cfg.GCPercent), false
}

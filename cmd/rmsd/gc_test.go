package main

import (
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/rmsd/rmsd/config"
)

// gogcInForce reads the collector's target from the runtime.
func gogcInForce(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatal("the runtime does not report /gc/gogc:percent")
	}
	return int(s[0].Value.Uint64())
}

func TestGCPercentFromTheConfigurationUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	gogc, fromEnv := applyGCPercent(config.Server{GCPercent: 60}, []string{"HOME=/root"})
	if gogc != "60" || fromEnv || gogcInForce(t) != 60 {
		t.Errorf("without GOGC: %q, from the environment %v, in force %d; want 60 from the configuration", gogc, fromEnv, gogcInForce(t))
	}

	debug.SetGCPercent(100)
	gogc, fromEnv = applyGCPercent(config.Server{GCPercent: 60}, []string{"GOGC=200"})
	if gogc != "200" || !fromEnv || gogcInForce(t) != 100 {
		t.Errorf("with GOGC=200: %q, from the environment %v, in force %d; want the environment's, left to Go", gogc, fromEnv, gogcInForce(t))
	}
}

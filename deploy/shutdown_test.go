package deploy

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/coldreboot"
)

// stopMargin is the least time a service manager must leave rmsd after its
// drain window: closing listeners, the hardware pools and the store.
const stopMargin = 30

// chartValues reads the chart's values.yaml.
func chartValues(t *testing.T) object {
	t.Helper()
	data, err := os.ReadFile("helm/rmsd/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v object
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	return v
}

// seconds reads a whole number of seconds from a decoded YAML value.
func seconds(t *testing.T, what string, v any) int {
	t.Helper()
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) {
		t.Fatalf("%s = %v: want a whole number of seconds", what, v)
	}
	return int(f)
}

// TestShutdownWindowsCoverAColdReboot checks that the default drain window
// lets a cold reboot whose shelves are off finish (with time to restore the
// shelves), and that the Helm chart and the systemd unit wait out that
// drain, with a margin, before they kill rmsd; the chart's own config must
// not shorten the windows.
func TestShutdownWindowsCoverAColdReboot(t *testing.T) {
	d := config.Default()
	timing := coldreboot.DefaultTiming()
	need := timing.AfterShelvesOff() + timing.RestoreTimeout
	drainWindow := time.Duration(d.Workflows.DrainTimeoutSeconds) * time.Second
	if drainWindow < need {
		t.Errorf("default drain_timeout_seconds = %s: a cold reboot needs %s after its shelves go off (%s) plus %s to restore them",
			drainWindow, need, timing.AfterShelvesOff(), timing.RestoreTimeout)
	}
	drain := d.Server.DrainDelaySeconds + d.Server.ShutdownGraceSeconds + d.Workflows.DrainTimeoutSeconds

	values := chartValues(t)
	grace := seconds(t, "terminationGracePeriodSeconds", values.get("terminationGracePeriodSeconds"))
	if grace < drain+stopMargin {
		t.Errorf("Helm terminationGracePeriodSeconds = %d: want at least the default drain, %d s, plus %d s", grace, drain, stopMargin)
	}
	// The pod template of the Deployment and of cluster mode's StatefulSet.
	tmpl, err := os.ReadFile("helm/rmsd/templates/_pod.tpl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tmpl), "terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}") {
		t.Error("the pod template does not take terminationGracePeriodSeconds from the values")
	}
	for _, key := range []struct {
		section, name string
		want          int
	}{
		{"server", "drain_delay_seconds", d.Server.DrainDelaySeconds},
		{"server", "shutdown_grace_seconds", d.Server.ShutdownGraceSeconds},
		{"workflows", "drain_timeout_seconds", d.Workflows.DrainTimeoutSeconds},
	} {
		v := values.get("config", key.section, key.name)
		if v == nil {
			continue // the chart leaves it at rmsd's default
		}
		if got := seconds(t, key.name, v); got != key.want {
			t.Errorf("values.yaml config.%s.%s = %d, rmsd's default is %d: keep them the same", key.section, key.name, got, key.want)
		}
	}

	stop, err := strconv.Atoi(strings.Join(readUnit(t)["Service"]["TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	if stop < drain+stopMargin {
		t.Errorf("systemd TimeoutStopSec = %d: want at least the default drain, %d s, plus %d s", stop, drain, stopMargin)
	}
	if stop != grace {
		t.Errorf("systemd TimeoutStopSec = %d but Helm terminationGracePeriodSeconds = %d: keep them the same", stop, grace)
	}
}

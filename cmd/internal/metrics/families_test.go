package metrics

import (
	"errors"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// familiesFile lists every metric family rmsd's registry exports, one
// "name type" a line (type as the exposition format's TYPE line says it),
// the runtime's go_* and process_* included (client_golang's defaults on
// Linux, the platform rmsd ships for). The deploy package's tests check the chart's alerts and the
// Grafana dashboard against it; TestFamiliesFileMatchesTheRegistry keeps
// it true to the registry (go test ./cmd/internal/metrics -update-families
// rewrites it).
const familiesFile = "testdata/families.txt"

var updateFamilies = flag.Bool("update-families", false, "rewrite "+familiesFile+" from the registry")

// everyFamily returns the names and types of the families a daemon's registry
// exports once every source is watched and every family has a sample.
func everyFamily(t *testing.T) []string {
	t.Helper()
	m := New(Info{PersistenceType: "sqlite"})
	sources := Sources{
		Jobs:            func() (int, int) { return 0, 0 },
		BMC:             func() (int, int) { return 0, 0 },
		DownloadBytes:   func() int64 { return 0 },
		RegistryMailbox: func() int { return 0 },
		QuarantinedJobs: func() int { return 0 },
		AuditDropped:    func() uint64 { return 0 },
	}
	// A source added to Sources must be set here, or its family would be
	// missing from the file the dashboard and alert tests check against.
	v := reflect.ValueOf(sources)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Fatalf("Sources.%s is not set in everyFamily", v.Type().Field(i).Name)
		}
	}
	m.Watch(sources)
	m.WatchSimulator(func() int { return 0 })
	m.ObserveRPC("rack_manager.RackManager", "GetVersion", codes.OK, time.Millisecond)
	m.ObserveJob(messages.JobObservation{Type: messages.TypeFirmwareUpdate, State: messages.StateQueued})
	m.ObserveJob(messages.JobObservation{Type: messages.TypeFirmwareUpdate, State: messages.StateCompleted, Duration: time.Second})
	m.ObserveCommit(time.Millisecond, nil)
	m.ObserveHardware(hw.RequestSample{Protocol: "redfish", Kind: hw.KindCompute, Elapsed: time.Millisecond, Err: errors.New("refused")})
	m.CertificateExpiry("server", time.Now())
	m.DrainStarted(time.Now())
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName()+" "+strings.ToLower(f.GetType().String()))
	}
	slices.Sort(names)
	return names
}

func TestFamiliesFileMatchesTheRegistry(t *testing.T) {
	got := strings.Join(everyFamily(t), "\n") + "\n"
	if *updateFamilies {
		if err := os.WriteFile(familiesFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(familiesFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date (rerun with -update-families); the registry exports:\n%s", familiesFile, got)
	}
}

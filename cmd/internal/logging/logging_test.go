package logging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
)

func TestJSONByDefaultWithLevelFilter(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "warn", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("hidden")
	log.Warn().Str("rack_id", "r1").Msg("shown")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want only the warn line, got %q", buf.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	if m["message"] != "shown" || m["rack_id"] != "r1" || m["level"] != "warn" {
		t.Fatalf("line = %v", m)
	}
	if _, ok := m["time"]; ok {
		t.Error("timestamps are off by default")
	}
}

func TestConsoleFormatIsHumanReadable(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "info", Format: "console", EnableTimestamps: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("node_id", "n7").Msg("powered on")
	out := buf.String()
	if strings.HasPrefix(out, "{") || !strings.Contains(out, "powered on") || !strings.Contains(out, "node_id=n7") {
		t.Fatalf("console line = %q", out)
	}
}

func TestComponentLevelsOverrideTheDefault(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "info,grpc=error", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	grpcLog, jobsLog := log.Component("grpc"), log.Component("jobs")
	grpcLog.Info().Msg("quiet")
	jobsLog.Info().Msg("loud")
	if strings.Contains(buf.String(), "quiet") || !strings.Contains(buf.String(), `"component":"jobs"`) {
		t.Fatalf("output = %q", buf.String())
	}
}

func TestProtoactorOutputGoesThroughZerolog(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "debug", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	system := actor.NewActorSystem(log.ActorSystemOption())
	system.Logger().Info("hello from the actor system")
	out := buf.String()
	if !strings.Contains(out, "hello from the actor system") || !strings.Contains(out, `"component":"protoactor"`) {
		t.Fatalf("protoactor line not in zerolog output: %q", buf.String())
	}
}

func TestCredentialsAreRedactedInLogs(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "info", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	creds := hw.UserPass("admin", "s3cret-pw")
	ep := hw.Endpoint{IP: "10.0.0.1", Credentials: creds}
	log.Info().Interface("creds", creds).Stringer("as_string", creds).Interface("endpoint", ep).
		Str("sprintf", fmtAll(creds)).Msg("logged")
	if strings.Contains(buf.String(), "s3cret-pw") {
		t.Fatalf("password leaked: %s", buf.String())
	}
	if !strings.Contains(buf.String(), "[REDACTED]") {
		t.Fatalf("no redaction marker: %s", buf.String())
	}
}

func fmtAll(v any) string {
	return fmt.Sprintf("%v %+v %#v %s %q", v, v, v, v, v)
}

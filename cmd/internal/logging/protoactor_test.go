package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/config"
)

// duplicateKeys returns the keys that occur more than once in one object of
// a JSON line, at any depth, as dotted paths. It reads tokens because
// encoding/json keeps the last of two equal keys without a word.
func duplicateKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	var dups []string
	var value func(path string)
	value = func(path string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					t.Fatalf("not JSON: %q: %v", line, err)
				}
				key := keyTok.(string)
				if seen[key] {
					dups = append(dups, path+key)
				}
				seen[key] = true
				value(path + key + ".")
			}
			_, _ = dec.Token() // '}'
		case json.Delim('['):
			for dec.More() {
				value(path)
			}
			_, _ = dec.Token() // ']'
		}
	}
	value("")
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("more than one JSON value on the line %q", line)
	}
	return dups
}

func TestDuplicateKeyDetectorSeesWhatEncodingJSONHides(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{`{"message":{"who":1},"message":"[DeadLetter]"}`, "message"},
		{`{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}]}`, "a.b,c.d"},
		{`{"message":"x","protoactor_message":{"message":"y"}}`, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(duplicateKeys(t, tt.give), ","); got != tt.want {
			t.Errorf("duplicateKeys(%s) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// deadLetterSystem is an actor system logging into buf at level, plus a
// message that will become a dead letter: a message to an actor that
// existed and has stopped, as after a job completes.
func deadLetterSystem(t *testing.T, level string, buf *bytes.Buffer) (*actor.ActorSystem, *actor.PID) {
	t.Helper()
	log, err := New(config.Logging{LogLevel: level, Format: "json"}, buf)
	if err != nil {
		t.Fatal(err)
	}
	system := actor.NewActorSystem(log.ActorSystemOption())
	t.Cleanup(system.Shutdown)
	pid := system.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	if err := system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	return system, pid
}

type jobDone struct{ JobID string }

func TestDeadLettersAreNotLoggedAtInfo(t *testing.T) {
	var buf bytes.Buffer
	system, stopped := deadLetterSystem(t, "info", &buf)
	system.Root.Send(stopped, &jobDone{JobID: "j1"}) // logged, if at all, before Send returns
	if strings.Contains(buf.String(), "DeadLetter") {
		t.Fatalf("a dead letter was logged at info:\n%s", buf.String())
	}
}

func TestDeadLettersAreLoggedAtDebugWithOneMessageKey(t *testing.T) {
	var buf bytes.Buffer
	system, stopped := deadLetterSystem(t, "debug", &buf)
	system.Root.Send(stopped, &jobDone{JobID: "j1"})
	line := strings.TrimSpace(buf.String())
	if strings.Count(line, "\n") != 0 || !strings.Contains(line, "DeadLetter") {
		t.Fatalf("want one dead-letter line, got:\n%s", buf.String())
	}
	if dups := duplicateKeys(t, line); len(dups) != 0 {
		t.Fatalf("dead-letter line repeats keys %v: %s", dups, line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if m["level"] != "debug" || m["message"] != "[DeadLetter]" || m["component"] != "protoactor" {
		t.Fatalf("dead-letter line = %v, want level debug, message [DeadLetter], component protoactor", m)
	}
	undelivered, _ := m["protoactor_message"].(map[string]any)
	if undelivered["JobID"] != "j1" {
		t.Fatalf("the undelivered message is not under protoactor_message: %v", m)
	}
	if _, ok := m["time"]; ok {
		t.Errorf("timestamps are off, but the line has one: %s", line)
	}
}

func TestProtoactorAttributesNeverRepeatTheLinesOwnKeys(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(config.Logging{LogLevel: "info", Format: "json", EnableTimestamps: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	system := actor.NewActorSystem(log.ActorSystemOption())
	defer system.Shutdown()
	buf.Reset()
	system.Logger().With(slog.String("component", "remote")).Error("[Supervision]",
		slog.Any("message", map[string]int{"n": 1}), slog.String("msg", "m"),
		slog.String("level", "l"), slog.String("time", "t"))
	line := strings.TrimSpace(buf.String())
	if dups := duplicateKeys(t, line); len(dups) != 0 {
		t.Fatalf("line repeats keys %v: %s", dups, line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"protoactor_message", "protoactor_msg", "protoactor_level", "protoactor_time", "protoactor_component"} {
		if _, ok := m[key]; !ok {
			t.Errorf("line lacks %s: %s", key, line)
		}
	}
	if m["message"] != "[Supervision]" || m["level"] != "error" || m["component"] != "protoactor" || m["time"] == nil {
		t.Errorf("the line's own fields were overwritten: %s", line)
	}
}

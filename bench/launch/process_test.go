package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// echoScript prints its ready line with a value from its environment,
// then answers every line it reads.
const echoScript = `echo "ready $GREETING"; while read -r l; do echo "got $l"; done`

func TestStartWaitsForTheReadyLineAndAnswersCommands(t *testing.T) {
	dir := t.TempDir()
	var readyLine string
	p, err := Start(context.Background(), Spec{
		Name: "echo", LogPath: filepath.Join(dir, "echo.log"), Env: []string{"GREETING=hello"}, Commands: true,
		Ready: func(l string) bool { readyLine = l; return strings.HasPrefix(l, "ready ") },
	}, "/bin/sh", "-c", echoScript)
	if err != nil {
		t.Fatal(err)
	}
	if readyLine != "ready hello" {
		t.Errorf("ready line %q: the environment did not reach the program", readyLine)
	}
	if p.PID() <= 0 {
		t.Errorf("pid %d", p.PID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, cmd := range []string{"one", "two"} {
		got, err := p.Command(ctx, cmd)
		if err != nil || got != "got "+cmd {
			t.Fatalf("Command(%q) = %q, %v", cmd, got, err)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(p.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if want := "ready hello\ngot one\ngot two\n"; string(log) != want {
		t.Errorf("log %q, want %q", log, want)
	}
}

func TestStartFailsWhenTheProgramExitsFirst(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "quitter", LogPath: filepath.Join(t.TempDir(), "q.log"),
		Ready: func(l string) bool { return l == "ready" }}, "/bin/sh", "-c", "echo starting; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("Start = %v, want an early exit", err)
	}
}

func TestStartGivesUpAfterItsTimeout(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "sleeper", LogPath: filepath.Join(t.TempDir(), "s.log"),
		Ready: func(string) bool { return false }, StartTimeout: 200 * time.Millisecond}, "/bin/sh", "-c", "exec sleep 60")
	if err == nil || !strings.Contains(err.Error(), "not ready within") {
		t.Fatalf("Start = %v, want a timeout", err)
	}
}

func TestCommandRefusedWithoutCommands(t *testing.T) {
	p, err := Start(context.Background(), Spec{Name: "plain", LogPath: filepath.Join(t.TempDir(), "p.log"),
		Ready: func(l string) bool { return l == "ready" }}, "/bin/sh", "-c", "echo ready; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if _, err := p.Command(context.Background(), "x"); err == nil {
		t.Fatal("Command succeeded on a program started without Commands")
	}
}

func TestStopReportsAFailedExit(t *testing.T) {
	p, err := Start(context.Background(), Spec{Name: "failer", LogPath: filepath.Join(t.TempDir(), "f.log"),
		Ready: func(l string) bool { return l == "ready" }},
		"/bin/sh", "-c", `trap 'exit 4' TERM; echo ready; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err == nil || !strings.Contains(err.Error(), "exited with 4") {
		t.Fatalf("Stop = %v, want exit code 4", err)
	}
}

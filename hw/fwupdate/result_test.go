package fwupdate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/messages"
)

func TestClipKeepsWholeCharacters(t *testing.T) {
	tests := []struct {
		give string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes
	}
	for _, tt := range tests {
		if got := clip(tt.give, tt.n); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.give, tt.n, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		give error
		want messages.JobError
	}{
		{errNoTargets, messages.ErrorInvalidArgument},
		{fmt.Errorf("x: %w", errInventoryMismatch), messages.ErrorFailedPrecondition},
		{fmt.Errorf("x: %w", redfish.ErrPrecondition), messages.ErrorFailedPrecondition},
		{&os.PathError{Op: "open", Path: "/f", Err: os.ErrNotExist}, messages.ErrorFileNotFound},
		{fmt.Errorf("%w: late", errTaskTimeout), messages.ErrorTimeout},
		{fmt.Errorf("%w: x: %w", errTaskLost, redfish.ErrUnauthenticated), messages.ErrorUnauthenticated},
		{fmt.Errorf("%w: x: %w", errTaskLost, redfish.ErrUnreachable), messages.ErrorClientError},
		{errNoTask, messages.ErrorInvalidResponse},
		{redfish.ErrNotFound, messages.ErrorTargetNotFound},
		{hw.ErrUnsupported, messages.ErrorInvalidArgument},
		{redfish.ErrUnavailable, messages.ErrorServerError},
		{fmt.Errorf("%w: ended Exception", errTaskFailed), messages.ErrorOther},
		{errVersionMismatch, messages.ErrorOther},
	}
	for _, tt := range tests {
		if got := classify(tt.give); got != tt.want {
			t.Errorf("classify(%v) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

func TestTaskTimeoutIsKeyedByNodeKind(t *testing.T) {
	tests := []struct {
		give hw.NodeType
		want time.Duration
	}{
		{hw.SwitchGB200Nvidia, 3 * time.Hour},
		{hw.ComputeGB300Supermicro, 90 * time.Minute},
		{hw.PowerShelfGB200Delta, 60 * time.Minute},
	}
	for _, tt := range tests {
		if got := (Timing{}).withDefaults(tt.give.Kind()).TaskTimeout; got != tt.want {
			t.Errorf("%s: task timeout %s, want %s", tt.give, got, tt.want)
		}
	}
	if got := (Timing{TaskTimeout: time.Minute}).withDefaults(hw.KindSwitch).TaskTimeout; got != time.Minute {
		t.Errorf("an explicit timeout became %s", got)
	}
}

// A failure summary is cut to upstream's 1200 characters; the message is
// kept whole.
func TestLongFailureSummaryIsClipped(t *testing.T) {
	rep := newReporter()
	r := &run{plan: Plan{Node: hw.Node{ID: "n1", RackID: "r1"}}, job: rep}
	long := strings.Repeat("x", 3000)
	r.fail(context.Background(), &stepError{phase: phasePoll, err: errors.New(long)})
	doc := failed(t, rep, messages.ErrorOther)
	if len(doc.Summary) != maxSummary || doc.ErrorMessage != long {
		t.Fatalf("summary %d bytes, message %d bytes", len(doc.Summary), len(doc.ErrorMessage))
	}
}

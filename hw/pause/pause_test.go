package pause

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestForWaitsItsDuration(t *testing.T) {
	start := time.Now()
	if err := For(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Error("returned before its duration")
	}
}

func TestForEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled pause returned %v", err)
	}
	if err := For(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a zero pause on a cancelled context returned %v", err)
	}
	if err := For(context.Background(), 0); err != nil {
		t.Errorf("a zero pause returned %v", err)
	}
}

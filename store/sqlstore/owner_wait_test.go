package sqlstore

import (
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// TestUntilFreeRetriesAHeldLockWithinTheWait: a held lock is tried again
// until it is taken within Ownership.Wait; without a wait the first
// refusal is final, and an error other than a refusal is never retried.
func TestUntilFreeRetriesAHeldLockWithinTheWait(t *testing.T) {
	held := &store.HeldError{Location: "path=x", Holder: store.Holder{Host: "h", PID: 1}}
	tries := 0
	got, err := untilFree(t.Context(), time.Minute, func() (int, error) {
		tries++
		if tries < 3 {
			return 0, held
		}
		return 7, nil
	})
	if err != nil || got != 7 || tries != 3 {
		t.Errorf("with a wait: %d, %v after %d tries; want the lock on the third", got, err, tries)
	}

	tries = 0
	_, err = untilFree(t.Context(), 0, func() (int, error) { tries++; return 0, held })
	if !errors.Is(err, store.ErrHeld) || tries != 1 {
		t.Errorf("without a wait: %v after %d tries; want the refusal after one", err, tries)
	}

	tries = 0
	broken := errors.New("disk gone")
	_, err = untilFree(t.Context(), time.Minute, func() (int, error) { tries++; return 0, broken })
	if !errors.Is(err, broken) || tries != 1 {
		t.Errorf("another error: %v after %d tries; want it at once", err, tries)
	}
}

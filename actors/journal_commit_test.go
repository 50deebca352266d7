package actors

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// commitLog records what Options.OnCommit is told.
type commitLog struct {
	mu   sync.Mutex
	ok   int
	errs []error
}

func (c *commitLog) observe(elapsed time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if elapsed <= 0 {
		c.errs = append(c.errs, errors.New("a commit observed with no duration"))
	}
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	c.ok++
}

func (c *commitLog) counts() (ok int, errs []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok, append([]error(nil), c.errs...)
}

// TestJournalOnCommitIsToldOfEveryCommit runs jobs over a real SQLite
// journal: OnCommit sees as many successful commits as reached the store,
// and a failed attempt (the store cut off) with its error.
func TestJournalOnCommitIsToldOfEveryCommit(t *testing.T) {
	j := &cutJournal{Journal: journalBackends[0].open(t)}
	log := &commitLog{}
	e, _ := newEngine(t, Options{Journal: j, OnCommit: log.observe})
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, completes("Completed", "{}")).ID)
	eventually(t, "OnCommit saw every commit that reached the store", func() bool {
		ok, errs := log.counts()
		return len(errs) == 0 && ok > 0 && int64(ok) == j.commits.Load()
	})

	j.cut.Store(true)
	if _, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "b"}, blocks, nil); !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Fatalf("create with the store cut off: %v", err)
	}
	eventually(t, "OnCommit saw the failed attempt", func() bool {
		_, errs := log.counts()
		return len(errs) > 0
	})
	if _, errs := log.counts(); !errors.Is(errs[0], errCut) {
		t.Fatalf("OnCommit's first error %v, want the store's", errs[0])
	}
	j.cut.Store(false)
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
}

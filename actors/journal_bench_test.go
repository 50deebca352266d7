package actors

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

// BenchmarkJournalAdmission admits batches of 100 children from 8
// concurrent callers (as gRPC handlers would) with the journal on SQLite
// and on PostgreSQL, against the engine in memory measured first in the
// same run; each journal figure reports x_memory, its admission rate as a
// fraction of the in-memory one (target >= 0.5). Children complete as
// soon as they start (once their admission is written), so their ends are
// journaled in the commits that follow, competing with later admissions;
// each batch is timed until its admission is answered:
//
//	go test -run '^$' -bench 'JournalAdmission' -benchtime 200x ./actors/
func BenchmarkJournalAdmission(b *testing.B) {
	var memory float64 // ns per batch in memory, this run
	for _, v := range []struct {
		name  string
		store int // index in journalBackends; -1: in memory
	}{{"memory", -1}, {"sqlite", 0}, {"postgres", 1}} {
		b.Run(v.name, func(b *testing.B) {
			var opts Options
			if v.store >= 0 {
				opts.Journal = journalBackends[v.store].open(b)
			}
			benchAdmission(b, opts, &memory, v.store < 0)
		})
	}
}

func benchAdmission(b *testing.B, opts Options, memory *float64, baseline bool) {
	opts.MaxTrackedJobs = 1 << 30
	e, _ := newEngine(b, opts)
	ts := make([]messages.BatchTarget, 100)
	for i := range ts {
		ts[i] = messages.BatchTarget{RackID: "r", NodeID: fmt.Sprint(i), Workflow: finishes}
	}
	const callers = 8
	var next sync.Mutex
	rack := 0
	b.ResetTimer()
	var wg sync.WaitGroup
	work := make(chan int)
	for range callers {
		wg.Go(func() {
			for range work {
				next.Lock()
				rack++
				r := fmt.Sprint("rack-", rack)
				next.Unlock()
				t := make([]messages.BatchTarget, len(ts))
				for i := range ts {
					t[i] = ts[i]
					t[i].RackID = r
				}
				if _, err := e.CreateBatch(b.Context(), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, t, nil); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := 0; i < b.N; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	b.StopTimer()
	perBatch := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if baseline {
		*memory = perBatch
	} else if *memory > 0 {
		b.ReportMetric(*memory/perBatch, "x_memory")
	}
}

package sqlstore_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// BenchmarkRackFencedAppend compares an append to a rack's journal stream
// fenced by the rack's lease (cluster mode) with a plain append to the
// single-process journal, one event per commit, on one PostgreSQL
// database: the fence adds a share-locked read of the rack's row to each
// commit, and "fenced-job" an insert into job_rack (the event names the
// job it creates). Read the sub-benchmarks of one run as ratios, never as
// absolute times.
func BenchmarkRackFencedAppend(b *testing.B) {
	s, err := sqlstore.OpenPostgres(b.Context(), storetest.TempPostgresDatabase(b), 4, sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	lease, err := s.AcquireRack(b.Context(), "rack-1", "m-a", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	events := []store.Event{{Kind: "JobCreated", Data: make([]byte, 256)}}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.AppendEvents(b.Context(), events); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fenced", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.AppendRackEvents(b.Context(), lease, events); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fenced-job", func(b *testing.B) {
		run, n := strconv.FormatInt(time.Now().UnixNano(), 36), 0 // new ids on every run
		for b.Loop() {
			n++
			named := []store.Event{{Kind: "JobCreated", Data: events[0].Data, Jobs: []string{"job-" + run + "-" + strconv.Itoa(n)}}}
			if _, err := s.AppendRackEvents(b.Context(), lease, named); err != nil {
				b.Fatal(err)
			}
		}
	})
}

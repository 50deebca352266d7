package actors

import (
	"context"
	"strconv"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

// BenchmarkAdmitWithFeed is BenchmarkAdmitLeafJob with 0 (the baseline),
// 1 and 8 subscribers reading the change feed as fast as they can: the
// cost the console's streams add to every registry turn. Compare the
// subscribers=N figures with subscribers=0 of the same run.
func BenchmarkAdmitWithFeed(b *testing.B) {
	for _, subs := range []int{0, 1, 8} {
		b.Run("subscribers="+strconv.Itoa(subs), func(b *testing.B) {
			e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
			done := make(chan struct{})
			for range subs {
				s := e.Subscribe(1 << 16)
				go func() {
					defer func() { done <- struct{}{} }()
					for range s.C() {
					}
				}()
				b.Cleanup(func() { s.Close() })
			}
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := e.Create(ctx, messages.JobSpec{RackID: strconv.Itoa(i >> 16), NodeID: "node-" + strconv.Itoa(i&(1<<16-1))}, doneWorkflow, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			e.Close()
			for range subs {
				<-done
			}
		})
	}
}

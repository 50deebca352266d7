package sitejobs

import "sync"

// fanOut runs read(i) for every i below n, each on a goroutine of its
// own and readers at a time, and returns once they all have. What a read
// returns (nil for nothing) runs under one lock, one at a time, before
// its slot is freed: it keeps the read's answer.
func (s *Site) fanOut(n int, read func(i int) (keep func())) {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		slots = make(chan struct{}, readers)
	)
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			keep := read(i)
			if keep == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			keep()
		})
	}
	wg.Wait()
}

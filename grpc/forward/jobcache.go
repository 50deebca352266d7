package forward

import (
	"container/list"
	"sync"
)

// jobCache remembers the rack of the jobs recently asked about, the most
// recently used first, up to a bound. A job's rack never changes, so an
// entry is never stale; only unknown jobs are not cached (they may be
// created a moment later).
type jobCache struct {
	mu    sync.Mutex
	max   int
	order *list.List               // of cacheEntry, most recent first
	byID  map[string]*list.Element // into order
}

type cacheEntry struct{ job, rack string }

// defaultJobCache bounds the job cache: a job id and a rack id each, some
// hundred bytes per entry.
const defaultJobCache = 65536

func newJobCache(max int) *jobCache {
	return &jobCache{max: max, order: list.New(), byID: make(map[string]*list.Element)}
}

// get returns the job's rack if it is cached.
func (c *jobCache) get(job string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[job]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(cacheEntry).rack, true
}

// put caches the job's rack, dropping the least recently used entry when
// the cache is full.
func (c *jobCache) put(job, rack string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[job]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byID[job] = c.order.PushFront(cacheEntry{job, rack})
	if c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(cacheEntry).job)
	}
}

// len is the number of cached jobs.
func (c *jobCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

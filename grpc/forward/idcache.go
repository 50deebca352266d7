package forward

import (
	"container/list"
	"sync"
)

// idCache remembers what the store said about the ids recently asked
// about, the most recently used first, up to a bound. It holds only facts
// that never change once written (a job's rack, a cluster parent's
// record), so an entry is never stale; what the store did not find is not
// cached (it may be written a moment later), and the bound keeps the
// memory of a member that is asked about many ids in check.
type idCache[V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List               // of idEntry[V], most recent first
	byID  map[string]*list.Element // into order
}

type idEntry[V any] struct {
	id    string
	value V
}

// Bounds of the receiving side's caches.
const (
	// defaultJobCache bounds the job → rack cache: a job id and a rack id
	// each, some hundred bytes per entry.
	defaultJobCache = 65536
	// defaultParentCache bounds the cluster parent cache. A parent is its
	// job type, method, member and, per rack, a rack id, a job id or a
	// failure message: about a kilobyte over six racks, so 8,192 of them
	// take about as much memory as the job cache's 65,536 ids. Parents are
	// polled while their racks' batches run, far fewer at a time than
	// jobs.
	defaultParentCache = 8192
)

func newIDCache[V any](max int) *idCache[V] {
	return &idCache[V]{max: max, order: list.New(), byID: make(map[string]*list.Element)}
}

// get returns the id's value if it is cached.
func (c *idCache[V]) get(id string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(idEntry[V]).value, true
}

// put caches the id's value, dropping the least recently used entry when
// the cache is full. A value already cached is kept: it cannot differ.
func (c *idCache[V]) put(id string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byID[id] = c.order.PushFront(idEntry[V]{id, v})
	if c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(idEntry[V]).id)
	}
}

// len is the number of cached ids.
func (c *idCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

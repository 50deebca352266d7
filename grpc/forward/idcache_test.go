package forward

import (
	"fmt"
	"testing"
)

// An id cache keeps at most its bound, dropping the least recently used
// id first.
func TestIDCacheIsBoundedAndDropsTheLeastRecentlyUsed(t *testing.T) {
	c := newIDCache[string](3)
	for i := range 3 {
		c.put(fmt.Sprintf("job-%d", i), fmt.Sprintf("rack-%d", i))
	}
	if r, ok := c.get("job-0"); !ok || r != "rack-0" { // job-1 is now the least recent
		t.Fatalf("job-0: %q %v", r, ok)
	}
	c.put("job-3", "rack-3")
	if _, ok := c.get("job-1"); ok {
		t.Error("job-1 should have been dropped")
	}
	for _, id := range []string{"job-0", "job-2", "job-3"} {
		if _, ok := c.get(id); !ok {
			t.Errorf("%s dropped", id)
		}
	}
	if c.len() != 3 {
		t.Errorf("%d cached, bound 3", c.len())
	}
}

package overlap

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/rmsd/rmsd/hw"
)

// maxHoldersPerDevice bounds the spans kept per device: past it, the spans
// that ended earliest are forgotten (a holder that comes back after that
// many others is no longer compared with them).
const maxHoldersPerDevice = 512

// maxHolderLen bounds a holder id taken from a request header.
const maxHolderLen = 128

// Overlap is one pair of holders whose spans on Device intersect.
type Overlap struct {
	Device  string
	Holders [2]string
}

// Recorder records mutating requests per device and counts overlaps. The
// zero value is not usable; make one with New. A nil *Recorder records
// nothing. It is safe for concurrent use.
type Recorder struct {
	onOverlap func(Overlap)

	mu           sync.Mutex
	seq          uint64
	devices      map[string]*device
	overlaps     int
	unattributed int
}

// New returns an empty Recorder; onOverlap, if not nil, is called (outside
// the Recorder's lock) once for every overlap found.
func New(onOverlap func(Overlap)) *Recorder {
	return &Recorder{onOverlap: onOverlap, devices: map[string]*device{}}
}

// device is the spans of one device's holders.
type device struct {
	spans   map[string]*span
	counted map[[2]string]bool
}

// span is one holder's mutating requests on one device.
type span struct {
	first, last uint64 // sequence of the first arrival, of the latest answer
	open        int    // requests in hand
}

// end is the span's end: unbounded while a request is in hand.
func (s *span) end() uint64 {
	if s.open > 0 {
		return ^uint64(0)
	}
	return s.last
}

func (s *span) intersects(o *span) bool { return s.first <= o.end() && o.first <= s.end() }

// Mutating reports whether an HTTP method changes a device's state.
func Mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// Begin records the arrival of a mutating request of holder ("" for a
// request that names none) on dev; the request's answer must be recorded by
// calling the returned function once.
func (r *Recorder) Begin(dev, holder string) (done func()) {
	if r == nil {
		return func() {}
	}
	if len(holder) > maxHolderLen {
		holder = holder[:maxHolderLen]
	}
	r.mu.Lock()
	r.seq++
	if holder == "" {
		r.unattributed++
		holder = fmt.Sprintf("unattributed request %d", r.unattributed)
	}
	d := r.devices[dev]
	if d == nil {
		d = &device{spans: map[string]*span{}, counted: map[[2]string]bool{}}
		r.devices[dev] = d
	}
	s := d.spans[holder]
	if s == nil {
		d.prune()
		s = &span{first: r.seq}
		d.spans[holder] = s
	}
	s.open++
	found := r.checkLocked(dev, d, holder, s)
	r.mu.Unlock()
	r.report(found)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.seq++
			s.open--
			s.last = r.seq
			var found []Overlap
			if d.spans[holder] == s { // not pruned meanwhile
				found = r.checkLocked(dev, d, holder, s)
			}
			r.mu.Unlock()
			r.report(found)
		})
	}
}

// checkLocked counts the pairs of holder with every other holder of d whose
// spans intersect and were not counted yet. Spans only grow, and only at
// their holder's own events, so checking at each event finds every pair.
func (r *Recorder) checkLocked(dev string, d *device, holder string, s *span) []Overlap {
	var found []Overlap
	for other, o := range d.spans {
		if other == holder || !s.intersects(o) {
			continue
		}
		pair := [2]string{holder, other}
		if other < holder {
			pair = [2]string{other, holder}
		}
		if d.counted[pair] {
			continue
		}
		d.counted[pair] = true
		r.overlaps++
		found = append(found, Overlap{Device: dev, Holders: pair})
	}
	return found
}

func (r *Recorder) report(found []Overlap) {
	if r.onOverlap == nil {
		return
	}
	for _, o := range found {
		r.onOverlap(o)
	}
}

// prune forgets the span that ended earliest, and the pairs counted with
// it, while d keeps maxHoldersPerDevice spans or more. Spans with requests
// in hand are kept.
func (d *device) prune() {
	for len(d.spans) >= maxHoldersPerDevice {
		oldest, at := "", ^uint64(0)
		for h, s := range d.spans {
			if s.open == 0 && s.last < at {
				oldest, at = h, s.last
			}
		}
		if oldest == "" {
			return // every span is open: keep them all
		}
		delete(d.spans, oldest)
		for pair := range d.counted {
			if pair[0] == oldest || pair[1] == oldest {
				delete(d.counted, pair)
			}
		}
	}
}

// Count returns the overlaps found so far.
func (r *Recorder) Count() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overlaps
}

// Unattributed returns how many mutating requests named no holder.
func (r *Recorder) Unattributed() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unattributed
}

// Holders returns the holders recorded on dev (those not pruned), for
// tests and diagnostics.
func (r *Recorder) Holders(dev string) []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.devices[dev]
	if d == nil {
		return nil
	}
	out := make([]string, 0, len(d.spans))
	for h := range d.spans {
		out = append(out, h)
	}
	return out
}

// Middleware records every mutating request next serves as acting on dev,
// for the holder its hw.HolderHeader names; it answers nothing itself.
func (r *Recorder) Middleware(dev string, next http.Handler) http.Handler {
	if r == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !Mutating(req.Method) {
			next.ServeHTTP(w, req)
			return
		}
		defer r.Begin(dev, req.Header.Get(hw.HolderHeader))()
		next.ServeHTTP(w, req)
	})
}

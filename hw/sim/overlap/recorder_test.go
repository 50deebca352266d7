package overlap

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
)

func TestTwoHoldersAtOnceOverlap(t *testing.T) {
	var got []Overlap
	r := New(func(o Overlap) { got = append(got, o) })
	endA := r.Begin("dev-1", "job-a")
	endB := r.Begin("dev-1", "lease-b")
	endB()
	endA()
	if r.Count() != 1 {
		t.Fatalf("Count = %d, want 1", r.Count())
	}
	want := Overlap{Device: "dev-1", Holders: [2]string{"job-a", "lease-b"}}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("reported %v, want [%v]", got, want)
	}
}

func TestOneHolderBetweenTwoRequestsOfAnotherOverlaps(t *testing.T) {
	r := New(nil)
	r.Begin("dev-1", "job-a")()
	r.Begin("dev-1", "lease-b")() // while job-a's span is still going on
	r.Begin("dev-1", "job-a")()
	if r.Count() != 1 {
		t.Fatalf("Count = %d, want 1 (lease-b acted inside job-a's span)", r.Count())
	}
}

func TestSequentialHoldersDoNotOverlap(t *testing.T) {
	r := New(nil)
	for range 3 {
		r.Begin("dev-1", "job-a")()
	}
	r.Begin("dev-1", "lease-b")()
	r.Begin("dev-1", "lease-b")()
	r.Begin("dev-1", "job-c")()
	if r.Count() != 0 {
		t.Fatalf("Count = %d, want 0 for holders one after another", r.Count())
	}
}

func TestSameHolderConcurrentRequestsDoNotOverlap(t *testing.T) {
	r := New(nil)
	end1 := r.Begin("dev-1", "job-a")
	end2 := r.Begin("dev-1", "job-a")
	end1()
	end2()
	if r.Count() != 0 {
		t.Fatalf("Count = %d, want 0 for one holder's concurrent requests", r.Count())
	}
}

func TestHoldersOnDifferentDevicesDoNotOverlap(t *testing.T) {
	r := New(nil)
	endA := r.Begin("dev-1", "job-a")
	endB := r.Begin("dev-2", "lease-b")
	endA()
	endB()
	if r.Count() != 0 {
		t.Fatalf("Count = %d, want 0 across devices", r.Count())
	}
}

func TestAPairIsCountedOnce(t *testing.T) {
	r := New(nil)
	endA := r.Begin("dev-1", "job-a")
	for range 5 {
		r.Begin("dev-1", "lease-b")()
	}
	endA()
	r.Begin("dev-1", "job-a")()
	if r.Count() != 1 {
		t.Fatalf("Count = %d, want 1 for one pair", r.Count())
	}
}

func TestUnattributedRequestOverlapsAHoldersSpan(t *testing.T) {
	r := New(nil)
	endA := r.Begin("dev-1", "job-a")
	r.Begin("dev-1", "")()
	r.Begin("dev-1", "")()
	endA()
	if r.Unattributed() != 2 {
		t.Fatalf("Unattributed = %d, want 2", r.Unattributed())
	}
	if r.Count() != 2 {
		t.Fatalf("Count = %d, want 2 (each unattributed request is its own holder)", r.Count())
	}
}

func TestPruningKeepsCountingNewOverlaps(t *testing.T) {
	r := New(nil)
	for i := range 2 * maxHoldersPerDevice {
		r.Begin("dev-1", "lease-"+string(rune('a'+i%26))+string(rune('a'+i/26)))()
	}
	if n := len(r.Holders("dev-1")); n > maxHoldersPerDevice {
		t.Fatalf("%d spans kept, want at most %d", n, maxHoldersPerDevice)
	}
	endA := r.Begin("dev-1", "job-a")
	r.Begin("dev-1", "job-b")()
	endA()
	if r.Count() != 1 {
		t.Fatalf("Count = %d, want 1", r.Count())
	}
}

func TestMiddlewareRecordsMutatingRequestsByHeader(t *testing.T) {
	r := New(nil)
	inA, releaseA := make(chan struct{}), make(chan struct{})
	h := r.Middleware("dev-1", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(hw.HolderHeader) == "job-a" {
			close(inA)
			<-releaseA
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		req := httptest.NewRequest(http.MethodPost, "/x", nil)
		req.Header.Set(hw.HolderHeader, "job-a")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-inA
	get := httptest.NewRequest(http.MethodGet, "/x", nil)
	get.Header.Set(hw.HolderHeader, "lease-b")
	h.ServeHTTP(httptest.NewRecorder(), get) // a read: not recorded
	if r.Count() != 0 {
		t.Fatalf("a read was counted: Count = %d", r.Count())
	}
	patch := httptest.NewRequest(http.MethodPatch, "/x", nil)
	patch.Header.Set(hw.HolderHeader, "lease-b")
	h.ServeHTTP(httptest.NewRecorder(), patch)
	close(releaseA)
	wg.Wait()
	if r.Count() != 1 {
		t.Fatalf("Count = %d, want 1 for a PATCH during job-a's POST", r.Count())
	}
}

func TestNilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Begin("dev-1", "job-a")()
	if r.Count() != 0 || r.Unattributed() != 0 || r.Holders("dev-1") != nil {
		t.Fatal("a nil Recorder reported something")
	}
}

package artifactsim_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// TestHeldNames: the held requests are listed by artifact name, a name
// once per held request, and leave the list when released.
func TestHeldNames(t *testing.T) {
	s := start(t, artifactsim.Options{})
	a := s.Publish("p/a.bin", []byte("a"))
	b := s.Publish("p/b.bin", []byte("b"))
	s.SetFault("p/a.bin", artifactsim.Fault{Hold: true})
	s.SetFault("p/b.bin", artifactsim.Fault{Hold: true})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	bodies := make([]string, 3)
	for i, url := range []string{b.URL, a.URL, b.URL} {
		wg.Go(func() {
			if _, body, err := get(t, ctx, url); err == nil {
				bodies[i] = string(body)
			}
		})
	}
	names, err := s.WaitHeldNames(ctx, func(n []string) bool { return len(n) == 3 })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p/a.bin", "p/b.bin", "p/b.bin"}; !slices.Equal(names, want) {
		t.Fatalf("held %v, want %v", names, want)
	}
	s.Release(3)
	if _, err := s.WaitHeldNames(ctx, func(n []string) bool { return len(n) == 0 }); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := s.HeldNames(); len(got) != 0 || !slices.Equal(bodies, []string{"b", "a", "b"}) {
		t.Fatalf("held %v after release, bodies %q", got, bodies)
	}
}

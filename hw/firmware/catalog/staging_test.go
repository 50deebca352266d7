package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// requestsFor counts the artifact server's requests for a.
func (fx *fixture) requestsFor(a artifactsim.Artifact) int {
	n := 0
	for _, r := range fx.srv.Requests() {
		if strings.TrimPrefix(r.Path, "/") == strings.TrimPrefix(a.Path, "/") {
			n++
		}
	}
	return n
}

// prepare parses rel's manifest and prepares a staging for names.
func (fx *fixture) prepare(rel simrelease.Release, names ...string) *catalog.Staging {
	fx.t.Helper()
	m, err := fx.svc.Parse(rel.ConfigJSON)
	if err != nil {
		fx.t.Fatal(err)
	}
	st, err := fx.svc.Prepare(m, names, hw.Secret{})
	if err != nil {
		fx.t.Fatalf("Prepare: %v", err)
	}
	return st
}

// Prepare contacts no artifact server; several children awaiting the
// same artifact share one download; progress counts each child's own.
func TestStagingDownloadsEachArtifactOnceForEveryChild(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{Size: 4 << 10})
	st := fx.prepare(rel, rel.ComputeBMC.Name, rel.HMC.Name)
	if n := len(fx.srv.Requests()); n != 0 {
		t.Fatalf("Prepare made %d requests", n)
	}
	fx.srv.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	var wg sync.WaitGroup
	errs := make([]error, 3)
	lastProgress := make([]int, 3)
	for i := range errs {
		wg.Go(func() {
			errs[i] = st.Await(testCtx(t), []string{rel.ComputeBMC.Name, rel.HMC.Name}, func(ready int) { lastProgress[i] = ready })
		})
	}
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	fx.srv.Release(1)
	wg.Wait()
	for i, err := range errs {
		if err != nil || lastProgress[i] != 2 {
			t.Errorf("child %d: %v, progress %d/2", i, err, lastProgress[i])
		}
	}
	for _, a := range []artifactsim.Artifact{rel.ComputeBMC, rel.HMC} {
		if n := fx.requestsFor(a); n != 1 {
			t.Errorf("%s requested %d times, want once", a.Name, n)
		}
		if _, err := os.Stat(filepath.Join(st.Dir(), a.Name)); err != nil {
			t.Errorf("%s not cached: %v", a.Name, err)
		}
	}
}

// A child cancelled while it fetches an artifact stops that transfer;
// another child awaiting the artifact takes the download over.
func TestStagingACancelledFetchIsTakenOverByAnotherChild(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{Size: 4 << 10})
	st := fx.prepare(rel, rel.ComputeBMC.Name)
	fx.srv.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	first, cancel := context.WithCancel(testCtx(t))
	firstErr := make(chan error, 1)
	go func() { firstErr <- st.Await(first, []string{rel.ComputeBMC.Name}, nil) }()
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	secondErr := make(chan error, 1)
	go func() { secondErr <- st.Await(testCtx(t), []string{rel.ComputeBMC.Name}, nil) }()
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled child: %v, want its cancellation", err)
	}
	// Release once the first request has left the server (it is recorded
	// then) and the second child's own is held: the permit is its.
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for fx.requestsFor(rel.ComputeBMC) != 1 || fx.srv.Held() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no takeover: %d requests done, %d held", fx.requestsFor(rel.ComputeBMC), fx.srv.Held())
		}
		<-tick.C
	}
	fx.srv.Release(1)
	if err := <-secondErr; err != nil {
		t.Errorf("second child: %v", err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), rel.ComputeBMC.Name)); err != nil {
		t.Errorf("not cached: %v", err)
	}
}

// A failed download is final for the apply: every child awaiting the
// artifact gets the failure naming it, with one request made; a child
// not needing it is not affected.
func TestStagingAFailureReachesEveryChildNeedingTheArtifact(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{Size: 4 << 10})
	st := fx.prepare(rel, rel.ComputeBMC.Name, rel.SwitchBMC.Name)
	fx.srv.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Status: 404})
	for i := range 2 {
		err := st.Await(testCtx(t), []string{rel.ComputeBMC.Name}, nil)
		if err == nil || !strings.Contains(err.Error(), rel.ComputeBMC.Name) || !strings.Contains(err.Error(), "404") {
			t.Errorf("child %d: %v; want the 404 naming %s", i, err, rel.ComputeBMC.Name)
		}
	}
	if n := fx.requestsFor(rel.ComputeBMC); n != 1 {
		t.Errorf("the missing artifact was requested %d times, want once", n)
	}
	if err := st.Await(testCtx(t), []string{rel.SwitchBMC.Name}, nil); err != nil {
		t.Errorf("a child not needing it: %v", err)
	}
}

// Closing the catalog stops a download in progress; the artifact then
// fails for every child, saying rmsd is shutting down, and Prepare is
// refused.
func TestStagingCloseStopsTheDownloads(t *testing.T) {
	fx := newFixture(t, fixtureOptions{})
	rel := fx.publish(simrelease.Options{Size: 4 << 10})
	st := fx.prepare(rel, rel.ComputeBMC.Name)
	m, err := fx.svc.Parse(rel.ConfigJSON)
	if err != nil {
		t.Fatal(err)
	}
	fx.srv.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	done := make(chan error, 1)
	go func() { done <- st.Await(testCtx(t), []string{rel.ComputeBMC.Name}, nil) }()
	if err := fx.srv.WaitHeld(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	svc := fx.svc
	fx.close()
	if err := <-done; !errors.Is(err, catalog.ErrClosed) || !strings.Contains(err.Error(), rel.ComputeBMC.Name) {
		t.Errorf("await across Close: %v", err)
	}
	if _, err := svc.Prepare(m, nil, hw.Secret{}); !errors.Is(err, catalog.ErrClosed) {
		t.Errorf("Prepare after Close: %v", err)
	}
}

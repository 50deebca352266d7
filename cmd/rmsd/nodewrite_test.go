package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
)

// hangingNodes is a node store that never answers a write: each waits
// for its context, whose deadline it records.
type hangingNodes struct {
	store.Nodes
	deadlines chan time.Duration
}

func (h *hangingNodes) wait(ctx context.Context) error {
	d, ok := ctx.Deadline()
	if !ok {
		h.deadlines <- -1
		return errors.New("no deadline")
	}
	h.deadlines <- time.Until(d)
	<-ctx.Done()
	return ctx.Err()
}

func (h *hangingNodes) PutRack(ctx context.Context, _ store.RackRecord) error { return h.wait(ctx) }

func (h *hangingNodes) PutNode(ctx context.Context, n store.NodeRecord) (store.NodeRecord, error) {
	return n, h.wait(ctx)
}

func (h *hangingNodes) ListNodes(context.Context) ([]store.NodeRecord, error) { return nil, nil }
func (h *hangingNodes) ListRacks(context.Context) ([]store.RackRecord, error) { return nil, nil }

// TestANodeWriteEndsAtTheConfiguredStoreTimeout: a node change the store
// does not answer ends at [storage] timeout_seconds (not a fixed bound of
// its own), is refused as unavailable, and is not registered.
func TestANodeWriteEndsAtTheConfiguredStoreTimeout(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "store-keys")
	if err := os.WriteFile(keys, []byte(keyLine("k1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	st := &hangingNodes{deadlines: make(chan time.Duration, 4)}
	reg := racks.New(nil)
	cfg := config.Storage{EncryptionKeyFile: keys, TimeoutSeconds: 1}
	if err := restoreNodes(t.Context(), cfg, st, reg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	n := hw.Node{ID: "tray-1", RackID: "rack-a", Type: hw.ComputeGB200Nvidia,
		BMC: &hw.Endpoint{IP: "10.0.0.1", Credentials: hw.UserPass("admin", bmcPassword)}}
	done := make(chan []error, 1)
	go func() { done <- reg.Create([]hw.Node{n}) }()
	select {
	case d := <-st.deadlines:
		if d <= 0 || d > time.Second {
			t.Errorf("the node write's deadline is %s away, want at most the configured 1s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the node write did not start")
	}
	select {
	case errs := <-done:
		if !errors.Is(errs[0], racks.ErrUnavailable) || !strings.Contains(errs[0].Error(), "within 1s") {
			t.Errorf("a write the store did not answer: %v, want racks.ErrUnavailable naming the 1s bound", errs[0])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a node write the store does not answer did not end")
	}
	if _, err := reg.Node("rack-a", "tray-1"); err == nil {
		t.Fatal("a node the store did not take is registered")
	}
}

package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// TestPostgresStalledReadsFailUnavailableWithinTheReadTimeout stalls the
// connection to PostgreSQL (a proxy that stops forwarding, no reset):
// reads of the catalog, the apply history and the nodes fail with
// store.ErrUnavailable within a few read timeouts, although the caller's
// own deadline is far longer, and succeed again once the proxy forwards.
func TestPostgresStalledReadsFailUnavailableWithinTheReadTimeout(t *testing.T) {
	const readTimeout = time.Second
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	st, err := sqlstore.OpenPostgres(t.Context(), via, 4, sqlstore.Options{ReadTimeout: readTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })

	reads := map[string]func(context.Context) error{
		"firmware objects": func(ctx context.Context) error {
			_, err := st.ListFirmwareObjects(ctx, store.ObjectFilter{})
			return err
		},
		"apply history": func(ctx context.Context) error {
			_, err := st.ListApplyHistory(ctx, store.HistoryFilter{})
			return err
		},
		"nodes": func(ctx context.Context) error {
			_, err := st.ListNodes(ctx)
			return err
		},
	}
	for what, read := range reads {
		if err := read(t.Context()); err != nil {
			t.Fatalf("%s before the stall: %v", what, err)
		}
	}

	proxy.Stall()
	for what, read := range reads {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		start := time.Now()
		err := read(ctx)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s while stalled: %v, want store.ErrUnavailable", what, err)
		}
		if took > 5*readTimeout {
			t.Errorf("%s while stalled answered after %s, want within 5× the read timeout %s", what, took, readTimeout)
		}
	}

	proxy.Restore()
	for what, read := range reads {
		if err := read(t.Context()); err != nil {
			t.Errorf("%s after the stall: %v", what, err)
		}
	}
}

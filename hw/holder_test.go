package hw

import (
	"context"
	"net/http"
	"testing"
)

// roundTripFunc records the request a transport passes on.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHolderTransportNamesTheHolder(t *testing.T) {
	var sent *http.Request
	tr := HolderTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody}, nil
	}))
	ctx := WithHolder(context.Background(), "job-1")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://127.0.0.1/redfish/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got := sent.Header.Get(HolderHeader); got != "job-1" {
		t.Fatalf("sent %s = %q, want job-1", HolderHeader, got)
	}
	if req.Header.Get(HolderHeader) != "" {
		t.Fatal("the caller's request was changed")
	}

	plain, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://127.0.0.1/redfish/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(plain); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent.Header[HolderHeader]; ok {
		t.Fatalf("a request without a holder carried %s", HolderHeader)
	}
}

// TestANamedRequestIsSentAsItIs: a request its client named with
// NameHolder is passed on itself, not copied (the copy cost every
// southbound read of a lease its header, URL and request allocations);
// one naming another holder is sent as a copy naming the context's.
func TestANamedRequestIsSentAsItIs(t *testing.T) {
	var sent *http.Request
	tr := HolderTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody}, nil
	}))
	ctx := WithHolder(context.Background(), "lease-7")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1/redfish/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	NameHolder(req)
	if got := req.Header.Get(HolderHeader); got != "lease-7" {
		t.Fatalf("NameHolder set %s = %q, want lease-7", HolderHeader, got)
	}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if sent != req {
		t.Error("a request already naming its holder was copied")
	}

	other := req.Clone(WithHolder(context.Background(), "job-9"))
	if _, err := tr.RoundTrip(other); err != nil {
		t.Fatal(err)
	}
	if got := sent.Header.Get(HolderHeader); got != "job-9" || sent == other {
		t.Errorf("a request naming another holder was sent naming %q (copied: %t), want job-9 on a copy", got, sent != other)
	}

	plain, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://127.0.0.1/redfish/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	NameHolder(plain)
	if _, ok := plain.Header[HolderHeader]; ok {
		t.Errorf("NameHolder named a holder on a request whose context has none")
	}
}

func TestWithHolderEmptyKeepsTheOuterHolder(t *testing.T) {
	ctx := WithHolder(context.Background(), "job-1")
	if got := HolderOf(WithHolder(ctx, "")); got != "job-1" {
		t.Fatalf("HolderOf = %q, want job-1", got)
	}
	if got := HolderOf(context.Background()); got != "" {
		t.Fatalf("HolderOf(background) = %q", got)
	}
}

type closeCounter struct {
	http.RoundTripper
	closed int
}

func (c *closeCounter) CloseIdleConnections() { c.closed++ }

func TestHolderTransportPassesCloseIdleConnectionsOn(t *testing.T) {
	base := &closeCounter{}
	(&http.Client{Transport: HolderTransport(base)}).CloseIdleConnections()
	if base.closed != 1 {
		t.Fatalf("CloseIdleConnections reached the base %d times, want 1", base.closed)
	}
}

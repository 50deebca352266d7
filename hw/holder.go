package hw

import (
	"context"
	"net/http"
)

// HolderHeader is the HTTP header that names, on every southbound request
// made for a job or an operation lease, the job id or lease id on whose
// behalf the request is sent. Devices ignore it; the rack simulator uses it
// to prove that no two holders act on one device at the same time.
const HolderHeader = "X-Rmsd-Job"

type holderKey struct{}

// WithHolder returns ctx naming id (a job id or a lease id) as the holder
// the hardware requests made under it are sent for. An empty id leaves ctx
// as it is.
func WithHolder(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, holderKey{}, id)
}

// HolderOf returns the holder id WithHolder put on ctx, or "".
func HolderOf(ctx context.Context) string {
	id, _ := ctx.Value(holderKey{}).(string)
	return id
}

// NameHolder sets HolderHeader on a request its caller has just built, to
// the holder its context names (none: nothing). The clients that build
// their requests call it, so that HolderTransport has nothing to copy.
func NameHolder(r *http.Request) {
	if id := HolderOf(r.Context()); id != "" {
		r.Header[HolderHeader] = []string{id}
	}
}

// HolderTransport wraps base so that every request whose context names a
// holder carries it in HolderHeader: a request that does not yet (one its
// client did not name with NameHolder) is sent as a copy with the header
// set. It performs no I/O of its own.
func HolderTransport(base http.RoundTripper) http.RoundTripper {
	return holderTransport{base: base}
}

type holderTransport struct{ base http.RoundTripper }

// RoundTrip sends a copy of r with the holder header set (a RoundTripper
// must not change the request it is given).
func (t holderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	id := HolderOf(r.Context())
	if id == "" || (len(r.Header[HolderHeader]) == 1 && r.Header[HolderHeader][0] == id) {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set(HolderHeader, id)
	return t.base.RoundTrip(r)
}

// CloseIdleConnections passes on to base, so that http.Client's method of
// that name still reaches the wrapped transport.
func (t holderTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

package httpsync

import "net/http"

// Route returns a RoundTripper that sends the requests this package
// supports (Supports) through sync and every other one through other.
func Route(sync *Transport, other http.RoundTripper) http.RoundTripper {
	return route{sync: sync, other: other}
}

type route struct {
	sync  *Transport
	other http.RoundTripper
}

func (r route) RoundTrip(req *http.Request) (*http.Response, error) {
	if Supports(req) {
		return r.sync.RoundTrip(req)
	}
	return r.other.RoundTrip(req)
}

package metrics

import (
	"net/http"
	"net/http/pprof"
)

// ProfileRoutes are Go's runtime profiles under /debug/pprof/ (the heap,
// goroutines, allocations, a CPU profile on request), for the metrics
// listener when [metrics] pprof is set. They expose the daemon's
// internals (stacks, allocation sites), never memory contents; the
// command line handler is left out, so no flag value is served.
func ProfileRoutes() []Route {
	return []Route{
		{Pattern: "GET /debug/pprof/", Handler: http.HandlerFunc(pprof.Index)},
		{Pattern: "GET /debug/pprof/profile", Handler: http.HandlerFunc(pprof.Profile)},
		{Pattern: "GET /debug/pprof/symbol", Handler: http.HandlerFunc(pprof.Symbol)},
		{Pattern: "GET /debug/pprof/trace", Handler: http.HandlerFunc(pprof.Trace)},
	}
}

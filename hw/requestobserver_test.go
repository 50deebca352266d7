package hw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestObservedTransportReportsKindStatusAndTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var seen []RequestSample
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: ObservedTransport(base, "redfish", KindSwitch, func(s RequestSample) { seen = append(seen, s) })}

	get := func(ctx context.Context, url string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	get(WithDeviceKind(context.Background(), KindPowerShelf), srv.URL+"/ok")
	get(context.Background(), srv.URL+"/broken")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	get(WithDeviceKind(context.Background(), KindCompute), deadURL)

	if len(seen) != 3 {
		t.Fatalf("observed %d requests, want 3: %+v", len(seen), seen)
	}
	want := []struct {
		kind   Kind
		status int
		err    bool
	}{{KindPowerShelf, 200, false}, {KindSwitch, 500, false}, {KindCompute, 0, true}}
	for i, w := range want {
		s := seen[i]
		if s.Protocol != "redfish" || s.Kind != w.kind || s.Status != w.status || (s.Err != nil) != w.err || s.Elapsed <= 0 {
			t.Errorf("request %d observed %+v, want kind %v status %d error %v", i, s, w.kind, w.status, w.err)
		}
	}
	if ObservedTransport(base, "nvue", KindSwitch, nil) != http.RoundTripper(base) {
		t.Error("a nil observer should leave the transport unwrapped")
	}
}

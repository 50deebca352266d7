package redfish

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A body is read whole whether the BMC announces its length or sends it in
// chunks; past the limit the caller gets one byte more than the limit, and
// a body cut short of its announced length is an error.
func TestReadBodyAnnouncedChunkedOversizedAndCut(t *testing.T) {
	const limit = 64
	small := strings.Repeat("a", 40)
	big := strings.Repeat("b", 200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/announced":
			w.Header().Set("Content-Length", strconv.Itoa(len(small)))
			fmt.Fprint(w, small)
		case "/chunked":
			for _, c := range []string{small[:10], small[10:]} {
				fmt.Fprint(w, c)
				w.(http.Flusher).Flush()
			}
		case "/announced-big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			fmt.Fprint(w, big)
		case "/chunked-big":
			for range 4 {
				fmt.Fprint(w, big[:50])
				w.(http.Flusher).Flush()
			}
		case "/cut":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(small), small[:10])
			buf.Flush()
		}
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	read := func(path string) ([]byte, error) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		return readBody(resp, limit)
	}
	for path, want := range map[string]string{
		"/announced": small, "/chunked": small,
		"/announced-big": big[:limit+1], "/chunked-big": strings.Repeat(big[:50], 4)[:limit+1],
	} {
		got, err := read(path)
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Errorf("%s: %d bytes %q, %v; want %d bytes", path, len(got), clipBody(got), err, len(want))
		}
	}
	if got, err := read("/cut"); err == nil {
		t.Errorf("/cut: %d bytes %q and no error, want an error for a body cut short", len(got), got)
	}
}

// clipBody shortens a body for a failure message.
func clipBody(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "…"
	}
	return string(b)
}

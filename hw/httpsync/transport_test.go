package httpsync_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rmsd/rmsd/hw/httpsync"
)

// server is a test HTTPS server that counts the connections it accepted.
type server struct {
	*httptest.Server
	accepted atomic.Int32
	closed   chan struct{} // one value per connection closed
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(h), closed: make(chan struct{}, 64)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.accepted.Add(1)
		case http.StateClosed:
			s.closed <- struct{}{}
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func newTransport(t *testing.T, o httpsync.Options) *httpsync.Transport {
	t.Helper()
	o.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test server
	tr := httpsync.New(o)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// get sends a GET through rt and returns the body read to its end.
func get(ctx context.Context, rt http.RoundTripper, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), nil
}

func hello(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello %s %s", r.URL.Path, r.Header.Get("Authorization"))
}

func TestSequentialGetsShareOneConnection(t *testing.T) {
	s := newServer(t, hello)
	tr := newTransport(t, httpsync.Options{})
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodGet, s.URL+fmt.Sprintf("/r%d", i), nil)
		req.SetBasicAuth("u", "p")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("hello /r%d Basic ", i)) {
			t.Fatalf("request %d: %q, %v", i, b, err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("the server accepted %d connections for 5 requests in turn, want 1", n)
	}
	if n := tr.IdleConnections(); n != 1 {
		t.Errorf("%d idle connections, want 1", n)
	}
}

func TestBodyClosedUnreadClosesTheConnection(t *testing.T) {
	s := newServer(t, hello)
	tr := newTransport(t, httpsync.Options{})
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections after a body closed unread, want 0", n)
	}
	<-s.closed // the server sees it go
	if _, err := get(context.Background(), tr, s.URL+"/y"); err != nil {
		t.Fatal(err)
	}
	if n := s.accepted.Load(); n != 2 {
		t.Errorf("the server accepted %d connections, want 2", n)
	}
}

func TestChunkedBodyIsReadWholeAndTheConnectionKept(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part%d;", i)
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
	})
	tr := newTransport(t, httpsync.Options{})
	for range 2 {
		b, err := get(context.Background(), tr, s.URL)
		if err != nil || b != "part0;part1;part2;" {
			t.Fatalf("got %q, %v", b, err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("the server accepted %d connections, want 1", n)
	}
}

func TestConnectionClosedByTheHostWhileIdleIsRedialled(t *testing.T) {
	s := newServer(t, hello)
	tr := newTransport(t, httpsync.Options{})
	if _, err := get(context.Background(), tr, s.URL); err != nil {
		t.Fatal(err)
	}
	s.CloseClientConnections()
	<-s.closed
	b, err := get(context.Background(), tr, s.URL+"/again")
	if err != nil || !strings.HasPrefix(b, "hello /again") {
		t.Fatalf("after the host closed the idle connection: %q, %v", b, err)
	}
	if n := s.accepted.Load(); n != 2 {
		t.Errorf("the server accepted %d connections, want 2", n)
	}
}

func TestCancelEndsAnExchangeTheHostDoesNotAnswer(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	s := newServer(t, func(http.ResponseWriter, *http.Request) {
		close(arrived)
		<-release
	})
	defer close(release)
	tr := newTransport(t, httpsync.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := get(ctx, tr, s.URL)
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled exchange returned %v, want context.Canceled", err)
	}
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections after a cancelled exchange, want 0", n)
	}
}

// halfBodyServer announces a 10-byte body, sends "12345" and holds the
// rest until the test ends.
func halfBodyServer(t *testing.T) *server {
	t.Helper()
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "12345")
		w.(http.Flusher).Flush()
		<-release
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	return s
}

func TestCancelEndsABodyReadMidway(t *testing.T) {
	s := halfBodyServer(t)
	tr := newTransport(t, httpsync.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "12345" {
		t.Fatalf("first half: %q, %v", buf, err)
	}
	cancel()
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("a read after the context ended: %v, want context.Canceled", err)
	}
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections after a broken body, want 0", n)
	}
}

func TestInterimResponsesAreSkipped(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	})
	tr := newTransport(t, httpsync.Options{})
	if b, err := get(context.Background(), tr, s.URL); err != nil || b != "final" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestConnectionCloseFromTheHostIsHonoured(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	tr := newTransport(t, httpsync.Options{})
	for range 2 {
		if b, err := get(context.Background(), tr, s.URL); err != nil || b != "bye" {
			t.Fatalf("got %q, %v", b, err)
		}
	}
	if n := s.accepted.Load(); n != 2 {
		t.Errorf("the server accepted %d connections, want 2 (it asked for each to close)", n)
	}
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections, want 0", n)
	}
}

func TestConcurrentRequestsKeepAtMostTheHostsShare(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(3)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		arrived.Done()
		<-all // answer once all three are in flight
		io.WriteString(w, "ok")
	})
	tr := newTransport(t, httpsync.Options{MaxIdlePerHost: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := get(context.Background(), tr, s.URL)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.accepted.Load(); n != 3 {
		t.Errorf("the server accepted %d connections for 3 requests at once, want 3", n)
	}
	if n := tr.IdleConnections(); n != 2 {
		t.Errorf("%d idle connections, want 2 (the host's share)", n)
	}
	<-s.closed // the third was closed
}

func TestCloseIdleConnectionsClosesThem(t *testing.T) {
	s := newServer(t, hello)
	tr := newTransport(t, httpsync.Options{})
	if _, err := get(context.Background(), tr, s.URL); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections after CloseIdleConnections, want 0", n)
	}
	<-s.closed
}

func TestPlainHTTPIsSupported(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(hello))
	defer s.Close()
	tr := httpsync.New(httpsync.Options{})
	defer tr.CloseIdleConnections()
	if b, err := get(context.Background(), tr, s.URL+"/plain"); err != nil || !strings.HasPrefix(b, "hello /plain") {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestRouteSendsOnlyBodylessGetsThroughTheTransport(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	tr := newTransport(t, httpsync.Options{})
	other := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // test server
	defer other.CloseIdleConnections()
	rt := httpsync.Route(tr, other)

	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("payload"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST payload" {
		t.Fatalf("POST through the route: %q", b)
	}
	if n := tr.IdleConnections(); n != 0 {
		t.Fatalf("the POST left %d connections with the GET transport", n)
	}
	if b, err := get(context.Background(), rt, s.URL); err != nil || b != "GET " {
		t.Fatalf("GET through the route: %q, %v", b, err)
	}
	if n := tr.IdleConnections(); n != 1 {
		t.Errorf("the GET left %d connections with the GET transport, want 1", n)
	}
}

func TestUnsupportedRequestIsRefusedAndItsBodyClosed(t *testing.T) {
	tr := httpsync.New(httpsync.Options{})
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPut, "https://127.0.0.1:1/", body)
	if _, err := tr.RoundTrip(req); !errors.Is(err, httpsync.ErrUnsupported) {
		t.Errorf("PUT: %v, want ErrUnsupported", err)
	}
	if body.closed != 1 {
		t.Errorf("the refused request's body was closed %d times, want 1", body.closed)
	}
}

type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

func TestDialFailureIsTheDialersError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tr := httpsync.New(httpsync.Options{})
	_, err = get(context.Background(), tr, "https://"+addr+"/")
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("GET of a closed port: %v, want the dialer's *net.OpError", err)
	}
}

func TestClientTraceHearsOfConnectionsAndHandshakes(t *testing.T) {
	s := newServer(t, hello)
	tr := newTransport(t, httpsync.Options{})
	var reused []bool
	handshakes, first := 0, 0
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
		TLSHandshakeDone:     func(_ tls.ConnectionState, err error) { handshakes++ },
		GotFirstResponseByte: func() { first++ },
	})
	for range 2 {
		if _, err := get(ctx, tr, s.URL); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(reused) != "[false true]" || handshakes != 1 || first != 2 {
		t.Errorf("trace: connections reused %v, %d handshakes, %d first bytes; want [false true], 1, 2", reused, handshakes, first)
	}
}

func TestCloseEndsABodyReadBlockedInAnotherGoroutine(t *testing.T) {
	s := halfBodyServer(t)
	tr := newTransport(t, httpsync.Options{})
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil) // no deadline: only Close ends the read
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf) // blocks: the host sends no more
		errc <- err
	}()
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Error("the blocked read returned no error once the body was closed")
	}
	if n := tr.IdleConnections(); n != 0 {
		t.Errorf("%d idle connections after a body closed midway, want 0", n)
	}
}

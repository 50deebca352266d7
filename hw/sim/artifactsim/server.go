package artifactsim

import (
	"bytes"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
)

// TokenHeader carries the Artifactory API key.
const TokenHeader = "X-JFrog-Art-Api"

// Options configure a Server. The zero value serves published files to
// anyone.
type Options struct {
	// Token, when set, must be sent in X-JFrog-Art-Api; requests without it
	// or with another value get 401.
	Token hw.Secret
	// Dir, when set, serves files below it that were not published.
	Dir string
	// Logger receives one debug line per request (never a token).
	Logger zerolog.Logger
}

// Request is one request the server answered.
type Request struct {
	Method string
	Path   string
	// TokenSent reports whether X-JFrog-Art-Api was present (any value).
	TokenSent bool
	// Status is the status answered; 0 when the client went away first.
	Status int
}

// Server is a running artifact server.
type Server struct {
	opts   Options
	url    string
	srv    *http.Server
	served chan struct{} // closed when Serve returns
	done   chan struct{} // closed by Close: held and stalled handlers return

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever a counter changes
	closed   bool
	files    map[string][]byte
	faults   map[string]Fault
	requests []Request
	active   int // handlers running
	inFlight int // requests counted until their last byte
	maxIn    int
	held     int
	permits  int

	// heldNames counts the held requests per artifact name.
	heldNames map[string]int
}

// Start listens on a free loopback port and serves until Close.
func Start(o Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("artifactsim: listen: %w", err)
	}
	s := &Server{
		opts: o, url: "http://" + ln.Addr().String(),
		served: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{}),
		files: map[string][]byte{}, faults: map[string]Fault{}, heldNames: map[string]int{},
	}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // ends with ErrServerClosed on Close
	}()
	return s, nil
}

// URL is the server's base URL, "http://127.0.0.1:<port>".
func (s *Server) URL() string { return s.url }

// Close stops the server: held and stalled requests end, connections
// close, and Close returns once every handler has.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.served
	s.mu.Lock()
	for s.active > 0 {
		ch := s.changed
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	s.mu.Unlock()
}

// Requests returns every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// notifyLocked wakes everyone waiting for a counter to change.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "server closing", http.StatusServiceUnavailable)
		return
	}
	s.active++
	s.inFlight++
	if s.inFlight > s.maxIn {
		s.maxIn = s.inFlight
	}
	s.notifyLocked()
	s.mu.Unlock()
	leave := sync.OnceFunc(func() {
		s.mu.Lock()
		s.inFlight--
		s.notifyLocked()
		s.mu.Unlock()
	})
	defer func() {
		leave()
		s.mu.Lock()
		s.active--
		s.notifyLocked()
		s.mu.Unlock()
	}()

	name := strings.TrimPrefix(r.URL.Path, "/")
	req := Request{Method: r.Method, Path: r.URL.Path, TokenSent: r.Header.Get(TokenHeader) != ""}
	// A request is recorded before its answer is written, so a client that
	// has its answer always finds its request in Requests.
	record := sync.OnceFunc(func() {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		s.opts.Logger.Debug().Str("method", req.Method).Str("path", req.Path).Bool("token_sent", req.TokenSent).
			Int("status", req.Status).Msg("artifact request")
	})
	defer record() // the client left before an answer
	s.answer(w, r, name, func(status int) {
		req.Status = status
		record()
	}, leave)
}

// answer serves one request. answering is called with the status just
// before it is written; leave just before the last byte.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, name string, answering func(int), leave func()) {
	refuse := func(status int, msg string) {
		leave()
		answering(status)
		http.Error(w, msg, status)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		refuse(http.StatusMethodNotAllowed, "only GET and HEAD")
		return
	}
	if !s.opts.Token.IsZero() &&
		subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.opts.Token.Reveal())) != 1 {
		refuse(http.StatusUnauthorized, "missing or wrong "+TokenHeader)
		return
	}
	s.mu.Lock()
	f := s.faults[name]
	body, published := s.files[name]
	s.mu.Unlock()
	if f.Hold && !s.waitPermit(r.Context(), name) {
		return
	}
	switch {
	case f.RedirectTo != "":
		leave()
		answering(http.StatusFound)
		http.Redirect(w, r, f.RedirectTo, http.StatusFound)
		return
	case f.Status != 0:
		refuse(f.Status, http.StatusText(f.Status))
		return
	}
	content, size, err := s.open(name, body, published)
	if err != nil {
		// Missing, or outside Dir (os.Root refuses escapes).
		refuse(http.StatusNotFound, "404 page not found")
		return
	}
	if c, ok := content.(io.Closer); ok {
		defer c.Close()
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if !f.NoLength {
		w.Header().Set("Content-Length", fmt.Sprint(size))
	}
	if size == 0 || r.Method == http.MethodHead {
		leave()
	}
	answering(http.StatusOK)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		s.writeBody(r.Context(), w, content, size, f, leave)
	}
}

// open finds a published file, or one below Options.Dir.
func (s *Server) open(name string, body []byte, published bool) (io.Reader, int64, error) {
	if published {
		// Published bytes are never changed in place (Publish replaces
		// them), so every request reads them as they are.
		return bytes.NewReader(body), int64(len(body)), nil
	}
	if s.opts.Dir == "" || name == "" {
		return nil, 0, os.ErrNotExist
	}
	root, err := os.OpenRoot(s.opts.Dir)
	if err != nil {
		return nil, 0, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, os.ErrNotExist
	}
	return f, fi.Size(), nil
}

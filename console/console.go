package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
)

// Prefix is the path every console page lives under.
const Prefix = "/console/"

//go:embed web
var web embed.FS

// Catalog is what the firmware page reads and follows (*catalog.Service
// implements it).
type Catalog interface {
	List(ctx context.Context, f store.ObjectFilter) ([]catalog.Object, error)
	Subscribe(buffer int) *catalog.Subscription
}

// Deps are what the console reads. Jobs, Racks and Power are required.
type Deps struct {
	// Jobs is the job engine (or, in cluster mode, the site's engines):
	// jobs, holds and the change feed.
	Jobs Jobs
	// Racks is the rack registry: which nodes exist.
	Racks *racks.Registry
	// Power is the last-known power state, firmware and slot of each node.
	Power *powerview.View
	// Catalog is the firmware catalog; nil shows it unavailable.
	Catalog Catalog
	// Authorize, when set, is asked before every request is served: an
	// error refuses it with 403 (the error is logged, never shown). With
	// mTLS, the caller is callerid.FromTLS(r.TLS, r.RemoteAddr).
	Authorize func(r *http.Request) error
	// Version is rmsd's version, shown in the footer.
	Version string
	// Log receives refusals and failures.
	Log zerolog.Logger
}

// Console serves the pages. Close it before shutting its HTTP server down:
// the event streams it holds open end then.
type Console struct {
	deps  Deps
	pages map[string]*template.Template
	mux   *http.ServeMux
	// done ends every event stream (Close).
	done      chan struct{}
	closeOnce sync.Once
}

// page names, each a template of web/ combined with the layout.
var pageNames = []string{"site", "rack", "jobs", "job", "firmware"}

// New builds the console.
func New(d Deps) (*Console, error) {
	if d.Jobs == nil || d.Racks == nil || d.Power == nil {
		return nil, errors.New("console: jobs, racks and power are required")
	}
	c := &Console{deps: d, pages: map[string]*template.Template{}, done: make(chan struct{})}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(web, "web/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console: parse layout: %w", err)
	}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(web, "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parse page %s: %w", name, err)
		}
		c.pages[name] = t
	}
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		return nil, fmt.Errorf("console: static files: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/{$}", c.site)
	mux.HandleFunc("GET /console/racks/{rack...}", c.rack)
	mux.HandleFunc("GET /console/jobs", c.jobs)
	mux.HandleFunc("GET /console/jobs/{id...}", c.job)
	mux.HandleFunc("GET /console/firmware", c.firmware)
	mux.HandleFunc("GET /console/events", c.events)
	mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusFound)
	})
	c.mux = mux
	return c, nil
}

// ServeHTTP authorizes the request and serves it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.deps.Authorize != nil {
		if err := c.deps.Authorize(r); err != nil {
			c.deps.Log.Warn().Err(err).Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Msg("console request refused")
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	c.mux.ServeHTTP(w, r)
}

// Close ends the open event streams; safe more than once.
func (c *Console) Close() {
	c.closeOnce.Do(func() { close(c.done) })
}

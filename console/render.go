package console

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html/template"
	"net/http"
	"time"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"hue":    hue,
	"redact": redactText,
	"cellIn": func(rack string, c cell) rackCell { return rackCell{RackID: rack, cell: c} },
}

// rackCell is a cell with its rack, for the site page's links.
type rackCell struct {
	RackID string
	cell
}

// hue picks one of eight colours for a job id, so the cells one job holds
// share a colour and two jobs side by side differ.
func hue(id string) int {
	if id == "" {
		return -1
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % 8)
}

// view is what every page template gets.
type view struct {
	Title string
	// Page names the page (site, rack, jobs, job, firmware).
	Page string
	// Events is the event stream URL that keeps the page live.
	Events  string
	Version string
	Data    any
	// Unreachable names the racks whose owners did not answer (cluster
	// mode): the page shows the others.
	Unreachable []string
}

// render writes page p: the whole document, or with ?fragment=1 only its
// live part (what the script swaps in on a change).
func (c *Console) render(w http.ResponseWriter, r *http.Request, p string, v view) {
	v.Page, v.Version = p, c.deps.Version
	name := "layout.html"
	if r.URL.Query().Get("fragment") == "1" {
		name = "content"
	}
	var buf bytes.Buffer
	if err := c.pages[p].ExecuteTemplate(&buf, name, v); err != nil {
		c.deps.Log.Error().Err(err).Str("page", p).Msg("console page not rendered")
		http.Error(w, "page not rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}

// fail answers an error the reader can act on, without internals.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, code int, what string, err error) {
	if err != nil {
		c.deps.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("console: " + what)
	}
	http.Error(w, fmt.Sprintf("%d %s: %s", code, http.StatusText(code), what), code)
}

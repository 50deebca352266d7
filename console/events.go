package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/messages"
)

// Event stream tuning.
const (
	// feedBuffer is each stream's buffer of job engine changes: a browser
	// that falls further behind is dropped and told to reload.
	feedBuffer = 512
	// powerBuffer is the same for power changes.
	powerBuffer = 256
	// catalogBuffer is the same for firmware catalog changes (an object's
	// download makes two per artifact).
	catalogBuffer = 256
	// keepAlive is how often an idle stream sends a comment, so proxies
	// and the browser keep the connection.
	keepAlive = 15 * time.Second
)

// topic is what one page listens to.
type topic struct {
	name string // site, rack, jobs, job, firmware
	rack string
	job  string
}

// wantsJob reports whether a job change concerns the page.
func (t topic) wantsJob(j *messages.JobSnapshot) bool {
	switch t.name {
	case "jobs":
		return j.ParentID == ""
	case "job":
		return j.ID == t.job || j.ParentID == t.job
	case "rack":
		return j.RackID == t.rack && j.State.IsTerminal()
	default:
		return false
	}
}

// wantsHold reports whether a hold change concerns the page.
func (t topic) wantsHold(h *messages.HoldChange) bool {
	switch t.name {
	case "site":
		return true
	case "rack":
		return h.RackID == t.rack
	default:
		return false
	}
}

// wantsPower reports whether a power change concerns the page.
func (t topic) wantsPower(e powerview.Entry) bool {
	return t.name == "site" || t.name == "rack" && e.RackID == t.rack
}

// changed is the data of a "changed" event: what changed, so a script
// can tell, though the console's own script just refreshes its page.
type changed struct {
	Job string `json:"job,omitempty"`
	// State is the job's state, or the artifact's download state.
	State  string `json:"state,omitempty"`
	Rack   string `json:"rack,omitempty"`
	Node   string `json:"node,omitempty"`
	Holder string `json:"holder,omitempty"`
	Power  string `json:"power,omitempty"`
	// Object is the firmware object a catalog change concerns, Change
	// what changed (catalog.ChangeKind) and Artifact which artifact.
	Object   string `json:"object,omitempty"`
	Change   string `json:"change,omitempty"`
	Artifact string `json:"artifact,omitempty"`
}

// events streams a page's changes as server-sent events: "changed" (data:
// a JSON object naming the job, node or firmware object) whenever something
// the page shows changed, "reload" when the stream fell behind and dropped
// changes (the page must be reloaded), and a first "changed" right after
// subscribing, covering what changed between the page's render and the
// stream. The firmware page follows the catalog's feed, the others the job
// engine's and the power view's.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t := topic{name: q.Get("topic"), rack: q.Get("rack"), job: q.Get("id")}
	switch t.name {
	case "site", "rack", "jobs", "job", "firmware":
	default:
		c.fail(w, r, http.StatusBadRequest, "topic must be site, rack, jobs, job or firmware", nil)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		c.fail(w, r, http.StatusInternalServerError, "streaming unsupported", nil)
		return
	}
	// A nil channel is never ready: a page listens to its sources only.
	var (
		jobs    <-chan messages.JobChange
		power   <-chan powerview.Entry
		fw      <-chan catalog.Change
		dropped = func() bool { return false }
	)
	if t.name == "firmware" {
		if c.deps.Catalog != nil {
			sub := c.deps.Catalog.Subscribe(catalogBuffer)
			defer sub.Close()
			fw, dropped = sub.C(), sub.Dropped
		}
	} else {
		js := c.deps.Jobs.Subscribe(feedBuffer)
		defer js.Close()
		ps := c.deps.Power.Subscribe(powerBuffer)
		defer ps.Close()
		jobs, power = js.C(), ps.C()
		dropped = func() bool { return js.Dropped() || ps.Dropped() }
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) bool {
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	// ended tells the browser to reload when a feed dropped the stream;
	// a feed closed by its owner (rmsd stopping) just ends it.
	ended := func() {
		if dropped() {
			send("reload", changed{})
		}
	}
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if !send("changed", changed{}) {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		ok := true
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case ch, open := <-jobs:
			if !open {
				ended()
				return
			}
			ok = c.sendJobChange(t, ch, send)
		case e, open := <-power:
			if !open {
				ended()
				return
			}
			if t.wantsPower(e) {
				ok = send("changed", changed{Rack: e.RackID, Node: e.NodeID, Power: string(e.State)})
			}
		case ch, open := <-fw:
			if !open {
				ended()
				return
			}
			ok = send("changed", changed{Object: ch.ObjectID, Change: ch.Kind.String(), Artifact: ch.Artifact, State: string(ch.State)})
		}
		if !ok {
			return
		}
	}
}

// sendJobChange sends ch when the page shows it; false when the stream
// broke.
func (c *Console) sendJobChange(t topic, ch messages.JobChange, send func(string, any) bool) bool {
	switch {
	case ch.Job != nil && t.wantsJob(ch.Job):
		return send("changed", changed{Job: ch.Job.ID, State: ch.Job.State.String(), Rack: ch.Job.RackID, Node: ch.Job.NodeID})
	case ch.Hold != nil && t.wantsHold(ch.Hold):
		holder := ch.Hold.Job
		if !ch.Hold.Held {
			holder = ""
		}
		return send("changed", changed{Rack: ch.Hold.RackID, Node: ch.Hold.NodeID, Holder: holder})
	case ch.Evicted != "" && (t.name == "jobs" || t.name == "job" && ch.Evicted == t.job):
		return send("changed", changed{Job: ch.Evicted})
	}
	return true
}

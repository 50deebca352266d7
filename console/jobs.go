package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/rmsd/rmsd/messages"
)

// jobsLimit caps the jobs page at the newest jobs.
const jobsLimit = 500

// jobFilter is the jobs page's form.
type jobFilter struct {
	State string
	Type  string
	Rack  string
	Q     string
}

// jobsView is the jobs page's data.
type jobsView struct {
	Filter jobFilter
	States []string
	Types  []string
	Jobs   []jobRow
	// Total is how many jobs the engine listed before the filter.
	Total     int
	Truncated bool
}

// jobRow is one job in a list.
type jobRow struct {
	messages.JobSnapshot
	StateName string
	TypeName  string
}

func row(j messages.JobSnapshot) jobRow {
	t := j.Type.String()
	if j.Type == messages.TypeNone {
		t = ""
	}
	return jobRow{JobSnapshot: j, StateName: j.State.String(), TypeName: t}
}

// jobTypes are the workflow names the filter offers.
var jobTypes = []messages.JobType{
	messages.TypeFirmwareUpdate, messages.TypeSwitchCertificate, messages.TypeSwitchMtlsDisable,
	messages.TypeSwitchSdnFactoryDefaultReset, messages.TypeSwitchFactoryDefaultReset,
	messages.TypeSwitchSystemPasswordUpdate, messages.TypeSwitchSystemImageUpdate,
	messages.TypeConfigureScaleUpFabricManagerV2, messages.TypeColdRebootSequence, messages.TypeSystemValidation,
}

func (f jobFilter) keeps(j messages.JobSnapshot) bool {
	return (f.State == "" || j.State.String() == f.State) &&
		(f.Type == "" || j.Type.String() == f.Type) &&
		(f.Rack == "" || j.RackID == f.Rack) &&
		(f.Q == "" || strings.Contains(j.ID, f.Q) || strings.Contains(j.NodeID, f.Q) || strings.Contains(strings.ToLower(j.Description), strings.ToLower(f.Q)))
}

func (c *Console) jobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := jobFilter{State: q.Get("state"), Type: q.Get("type"), Rack: q.Get("rack"), Q: strings.TrimSpace(q.Get("q"))}
	listed, err := c.deps.Jobs.List(r.Context(), messages.ListJobs{TopLevel: true})
	all := listed.Jobs
	missed, err := partly(err)
	if err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, "the job registry did not answer", err)
		return
	}
	v := jobsView{Filter: f, Total: len(all), States: []string{"queued", "running", "completed", "failed"}}
	for _, t := range jobTypes {
		v.Types = append(v.Types, t.String())
	}
	for _, j := range all {
		if !f.keeps(j) {
			continue
		}
		if len(v.Jobs) == jobsLimit {
			v.Truncated = true
			break
		}
		v.Jobs = append(v.Jobs, row(j))
	}
	c.render(w, r, "jobs", view{Title: "Jobs", Events: Prefix + "events?topic=jobs", Data: v, Unreachable: missed})
}

// jobView is the job page's data.
type jobView struct {
	Job      jobRow
	Stages   []stage
	Children []jobRow
	// Counts tally the children by state.
	Counts map[string]int
	// Result is result_json indented, "" when the job has none.
	Result string
}

func (c *Console) job(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	snaps, err := c.deps.Jobs.Get(r.Context(), id, true)
	if errors.Is(err, messages.ErrJobNotFound) {
		c.fail(w, r, http.StatusNotFound, "no such job (or it was evicted)", nil)
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, "the job registry did not answer", err)
		return
	}
	j := snaps[0]
	v := jobView{Job: row(j), Stages: stagesOf(j), Counts: map[string]int{}, Result: indent(j.ResultJSON)}
	for _, ch := range snaps[1:] {
		v.Children = append(v.Children, row(ch))
		v.Counts[ch.State.String()]++
	}
	slices.SortStableFunc(v.Children, func(a, b jobRow) int { return strings.Compare(a.NodeID, b.NodeID) })
	c.render(w, r, "job", view{Title: "Job " + id, Events: Prefix + "events?topic=job&id=" + urlQuery(id), Data: v})
}

// indent pretty-prints a JSON document; text that is not JSON is shown as
// it is.
func indent(doc string) string {
	if doc == "" {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(doc), "", "  ") != nil {
		return doc
	}
	return b.String()
}

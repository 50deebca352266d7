package console_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/console"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/powerview"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}

const (
	evilRack = `rack-<script>alert("r")</script>`
	evilNode = `node-<script>alert("n")</script>`
	evilJob  = `job-<script>alert("j")</script>`
	password = "hunter2-very-secret"
)

// fixture is a console over a real job engine, rack registry and power
// view, served by a real HTTP server.
type fixture struct {
	engine *actors.Engine
	power  *powerview.View
	racks  *racks.Registry
	srv    *httptest.Server
	con    *console.Console
}

func newFixture(t *testing.T, authorize func(*http.Request) error) *fixture {
	t.Helper()
	return newFixtureWith(t, authorize, nil)
}

// newFixtureWith is newFixture with a firmware catalog (nil: none).
func newFixtureWith(t *testing.T, authorize func(*http.Request) error, cat console.Catalog) *fixture {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	e, err := actors.New(sys, actors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := racks.New(nil)
	bmc := func(ip string) *hw.Endpoint {
		return &hw.Endpoint{IP: ip, Credentials: hw.UserPass("admin", password)}
	}
	nodes := []hw.Node{
		{ID: evilNode, RackID: evilRack, Type: hw.ComputeGB200Nvidia, BMC: bmc("10.0.0.1")},
		{ID: "rack-a-compute-02", RackID: evilRack, Type: hw.ComputeGB200Nvidia, BMC: bmc("10.0.0.2")},
		{ID: "rack-a-switch-01", RackID: evilRack, Type: hw.SwitchGB200Nvidia, BMC: bmc("10.0.0.3")},
		{ID: "rack-a-powershelf-01", RackID: evilRack, Type: hw.PowerShelfGB200Liteon, BMC: bmc("10.0.0.4")},
	}
	for _, err := range reg.Create(nodes) {
		if err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{engine: e, power: powerview.New(nil), racks: reg}
	f.con, err = console.New(console.Deps{Jobs: e, Racks: reg, Power: f.power, Catalog: cat, Authorize: authorize, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.con)
	t.Cleanup(func() {
		f.con.Close()
		f.srv.Close()
		e.Close()
		sys.Shutdown()
	})
	return f
}

func (f *fixture) get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := f.srv.Client().Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// gate is a workflow that runs until released.
type gate struct{ release chan struct{} }

func (g gate) Run(ctx context.Context, job messages.Reporter) {
	job.Progress("Rack reboot step 1: powering off power shelves")
	select {
	case <-g.release:
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "shelf <b>refused</b>"))
	case <-ctx.Done():
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
	}
}

func TestPagesEscapeEveryIDAndShowNoCredential(t *testing.T) {
	f := newFixture(t, nil)
	f.power.Seen(evilRack, evilNode, platform.PowerStateOn)
	f.power.SetFirmware(evilRack, evilNode, []platform.Firmware{{ID: "FW_BMC_0", Version: "<i>1.2</i>"}})
	g := gate{release: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.engine.Create(ctx, messages.JobSpec{ID: evilJob, Type: messages.TypeColdRebootSequence, RackID: evilRack, NodeID: evilNode}, g, nil); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/console/",
		"/console/racks/" + urlPath(evilRack),
		"/console/jobs",
		"/console/jobs/" + urlPath(evilJob),
		"/console/firmware",
	} {
		code, body := f.get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<i>1.2") || strings.Contains(body, "<b>refused") {
			t.Errorf("GET %s renders an id unescaped:\n%s", path, body)
		}
		if strings.Contains(body, password) || strings.Contains(body, "10.0.0.1") {
			t.Errorf("GET %s shows a node's credentials or endpoint", path)
		}
	}
	_, site := f.get(t, "/console/")
	if !strings.Contains(site, "&lt;script&gt;alert(&#34;n&#34;)&lt;/script&gt;") || !strings.Contains(site, `data-holder="`+"job-&lt;script&gt;") {
		t.Errorf("the site page does not show the escaped node and its holder:\n%s", site)
	}
	_, job := f.get(t, "/console/jobs/"+urlPath(evilJob))
	if !strings.Contains(job, `data-stage="power_off_shelves" data-status="running"`) ||
		!strings.Contains(job, `data-stage="prestage_shutdown_compute" data-status="completed"`) {
		t.Errorf("the cold reboot's stage timeline does not place step 1:\n%s", job)
	}
	close(g.release)
	if err := f.engine.Wait(ctx, evilJob); err != nil {
		t.Fatal(err)
	}
	_, rack := f.get(t, "/console/racks/"+urlPath(evilRack))
	if !strings.Contains(rack, "shelf &lt;b&gt;refused&lt;/b&gt;") {
		t.Errorf("the rack page does not show the node's last error, escaped:\n%s", rack)
	}
}

func TestTheRackFrontViewIsInSlotOrder(t *testing.T) {
	f := newFixture(t, nil)
	f.power.SetSlot(evilRack, "rack-a-compute-02", 20) // reported by the device
	_, body := f.get(t, "/console/racks/"+urlPath(evilRack))
	order := []string{"rack-a-powershelf-01", "&lt;script&gt;alert(&#34;n&#34;)", "rack-a-switch-01", "rack-a-compute-02"}
	last := -1
	for _, id := range order {
		i := strings.Index(body, `<tr id="node-`+id) // the rows, top to bottom
		if i < 0 {
			i = strings.Index(body, `<tr id="node-node-`+id)
		}
		if i <= last {
			t.Fatalf("%s is out of the front view's order (at %d after %d):\n%s", id, i, last, body)
		}
		last = i
	}
	for _, want := range []string{"slot 1<", "slot 11<", "slot 20<", "PS 1<"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the front view", want)
		}
	}
}

func TestJobsFilterAndFragment(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Complete("done", `{"status":"completed","n":1}`)
	})
	a, err := f.engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r1", NodeID: "n1"}, done, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.engine.Create(ctx, messages.JobSpec{Type: messages.TypeSwitchSystemImageUpdate, RackID: "r2", NodeID: "n2"}, done, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.engine.Wait(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, "/console/jobs?rack=r2")
	if !strings.Contains(body, b.ID) || strings.Contains(body, a.ID) {
		t.Fatalf("rack filter: %s", body)
	}
	_, body = f.get(t, "/console/jobs?type=firmware_update&state=completed")
	if !strings.Contains(body, a.ID) || strings.Contains(body, b.ID) {
		t.Fatalf("type filter: %s", body)
	}
	_, frag := f.get(t, "/console/jobs?fragment=1")
	if strings.Contains(frag, "<html") || !strings.Contains(frag, a.ID) {
		t.Fatalf("the fragment is not the page's live part: %s", frag)
	}
	_, job := f.get(t, "/console/jobs/"+a.ID)
	if !strings.Contains(job, "&#34;n&#34;: 1") {
		t.Errorf("result_json is not pretty-printed: %s", job)
	}
	if code, _ := f.get(t, "/console/jobs/nope"); code != http.StatusNotFound {
		t.Errorf("unknown job: %d", code)
	}
	if code, _ := f.get(t, "/console/racks/nope"); code != http.StatusNotFound {
		t.Errorf("unknown rack: %d", code)
	}
}

func TestAuthorizeRefusesWithoutSayingWhy(t *testing.T) {
	f := newFixture(t, func(r *http.Request) error {
		if r.Header.Get("X-Test-Reader") == "yes" {
			return nil
		}
		return errors.New("caller lacks the read permission")
	})
	code, body := f.get(t, "/console/")
	if code != http.StatusForbidden || strings.Contains(body, "permission") {
		t.Fatalf("unauthorized: %d %q", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/console/", nil)
	req.Header.Set("X-Test-Reader", "yes")
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("authorized: %d", res.StatusCode)
	}
}

// sse reads server-sent events.
type sse struct {
	r   *bufio.Reader
	res *http.Response
}

func openEvents(t *testing.T, f *fixture, query string) *sse {
	t.Helper()
	res, err := f.srv.Client().Get(f.srv.URL + "/console/events?" + query)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { res.Body.Close() })
	return &sse{r: bufio.NewReader(res.Body), res: res}
}

// next returns the next event's name and data (a read is bounded by the
// test's overall timeout: the server always sends keep-alives).
func (s *sse) next(t *testing.T) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func TestEventsFollowTheEngineAndThePowerView(t *testing.T) {
	f := newFixture(t, nil)
	site := openEvents(t, f, "topic=site")
	if name, _ := site.next(t); name != "changed" {
		t.Fatalf("first event %q, want the catch-up changed", name)
	}
	f.power.Seen(evilRack, "rack-a-switch-01", platform.PowerStateOff)
	if name, data := site.next(t); name != "changed" || !strings.Contains(data, `"power":"Off"`) {
		t.Fatalf("power change: %s %s", name, data)
	}
	job := openEvents(t, f, "topic=job&id=j1")
	job.next(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g := gate{release: make(chan struct{})}
	if _, err := f.engine.Create(ctx, messages.JobSpec{ID: "j1", Type: messages.TypeColdRebootSequence, RackID: evilRack, NodeID: "rack-a-switch-01"}, g, nil); err != nil {
		t.Fatal(err)
	}
	if name, data := site.next(t); name != "changed" || !strings.Contains(data, `"holder":"j1"`) {
		t.Fatalf("hold: %s %s", name, data)
	}
	for {
		name, data := job.next(t)
		if name == "changed" && strings.Contains(data, `"state":"running"`) {
			break
		}
	}
	close(g.release)
	for {
		name, data := job.next(t)
		if name == "changed" && strings.Contains(data, `"state":"failed"`) {
			break
		}
	}
}

func TestASlowBrowserIsToldToReload(t *testing.T) {
	f := newFixture(t, nil)
	ev := openEvents(t, f, "topic=site")
	ev.next(t)
	// The stream is not read while the view changes far more than its
	// buffer and the sockets hold (20,000 events of 4 KiB): the console
	// drops it and says so, and the changes never waited for it.
	long := strings.Repeat("n", 4096)
	for i := range 20000 {
		st := platform.PowerStateOn
		if i%2 == 1 {
			st = platform.PowerStateOff
		}
		f.power.Seen(evilRack, long, st)
	}
	for {
		name, _ := ev.next(t)
		if name == "reload" {
			return
		}
	}
}

func urlPath(s string) string {
	return strings.NewReplacer("<", "%3C", ">", "%3E", `"`, "%22", " ", "%20", "(", "%28", ")", "%29").Replace(s)
}

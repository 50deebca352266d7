package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/clustersite"
)

// startConsoleSite is startClusterSite with every member's console on a
// port of its own; it returns the consoles' base URLs by member index.
func startConsoleSite(t *testing.T, racks, members int) (*clustersite.Site, []string) {
	t.Helper()
	ports := make([]int, members)
	urls := make([]string, members)
	for i := range ports {
		ports[i] = freePort(t)
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", ports[i])
	}
	o := clustersite.Options{Racks: racks, Members: members, Binary: siteBinary(t), MembershipTimeout: siteMembershipTimeout, DrainTimeout: 20}
	o.Dir, o.DatabaseURL, o.Wait = t.TempDir(), storetest.TempPostgresDatabase(t), clusterWait
	o.MemberEnv = func(id string) []string {
		var i int
		_, _ = fmt.Sscanf(id, "member-%d", &i)
		return []string{raceLogEnv(t, id), "RMS_CONSOLE__ENABLED=on", fmt.Sprintf("RMS_CONSOLE__PORT=%d", ports[i])}
	}
	s, err := clustersite.Start(t.Context(), o)
	logs := func() {
		for _, m := range s.Members {
			t.Logf("member %s output:\n%s", m.ID, m.Log())
		}
	}
	if err != nil {
		logs()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			logs()
		}
	})
	return s, urls
}

// consoleGet reads a console page; the body, or "" with the status.
func consoleGet(ctx context.Context, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// untilPage reads url until ok(body) holds, failing t when ctx ends.
func untilPage(ctx context.Context, t *testing.T, what, url string, ok func(string) bool) string {
	t.Helper()
	for {
		code, body := consoleGet(ctx, url)
		if code == http.StatusOK && ok(body) {
			return body
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %s answered %d, never as wanted; last body:\n%s", what, url, code, body)
		}
		clustersite.Pause(ctx, 250*time.Millisecond)
	}
}

// sseEvent is one server-sent event of a console stream.
type sseEvent struct {
	Name string
	Data struct {
		Job   string `json:"job"`
		State string `json:"state"`
	}
}

// openStream follows a console event stream until ctx ends; its events
// arrive on the channel, which is closed when the stream ends.
func openStream(ctx context.Context, t *testing.T, url string) <-chan sseEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, resp.Status)
	}
	out := make(chan sseEvent, 4096)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = sseEvent{Name: strings.TrimPrefix(line, "event: ")}
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data)
			case line == "" && ev.Name != "":
				select {
				case out <- ev:
				default: // the test reads what it waits for; a full buffer drops
				}
				ev = sseEvent{}
			}
		}
	}()
	return out
}

// untilEvent reads events until want holds for one, failing t when ctx
// ends or the stream does.
func untilEvent(ctx context.Context, t *testing.T, what string, events <-chan sseEvent, want func(sseEvent) bool) {
	t.Helper()
	for {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatalf("%s: the stream ended first", what)
			}
			if want(ev) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("%s: no such event before the deadline", what)
		}
	}
}

// listedState is the state the jobs page lists job id in ("" when not
// listed).
func listedState(body, id string) string {
	m := regexp.MustCompile(`data-job="` + regexp.QuoteMeta(id) + `" data-state="([a-z]+)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestClusterConsoleShowsTheWholeSite: two members, three racks, every
// member's console on. A job admitted on member B's rack is listed by
// member A's console with its state, its page on A shows its stages, and
// A's event stream carries its change to completed; a batch over two
// racks (a cluster parent) renders on A with its children and is a row
// of A's jobs page; after B is killed and A takes its racks over, A's
// console still lists the job B was running, Failed as interrupted, and
// A's stream is told to reload.
func TestClusterConsoleShowsTheWholeSite(t *testing.T) {
	started := time.Now()
	s, consoles := startConsoleSite(t, 3, 2)
	before := untilSettled(t, s, s.RackIDs(), s.Members...)
	t.Logf("site settled %s after the start", time.Since(started).Round(10*time.Millisecond))
	count := map[string]int{}
	for _, l := range before {
		count[l.Member]++
	}
	// B owns the most racks (at least two of the three); A is the other.
	bi := 0
	if count[s.Members[1].ID] > count[s.Members[0].ID] {
		bi = 1
	}
	ai := 1 - bi
	a, b := s.Members[ai], s.Members[bi]
	var bRacks []string
	for _, rack := range s.RackIDs() {
		if before[rack].Member == b.ID {
			bRacks = append(bRacks, rack)
		}
	}
	if len(bRacks) < 2 {
		t.Fatalf("member %s owns %v of racks %v, want at least two", b.ID, bRacks, before)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*clusterWait)
	defer cancel()
	console := consoles[ai]
	jobsStream := openStream(ctx, t, console+"/console/events?topic=jobs")
	untilEvent(ctx, t, "the stream's first event", jobsStream, func(ev sseEvent) bool { return ev.Name == "changed" })

	// A job on B's rack, admitted through B.
	first, err := coldReboot(ctx, s, b.RMS(), bRacks[0])
	if err != nil {
		t.Fatal(err)
	}
	untilPage(ctx, t, "the job listed by A", console+"/console/jobs", func(body string) bool { return listedState(body, first) != "" })
	untilPage(ctx, t, "the job's page on A with its stages", console+"/console/jobs/"+first, func(body string) bool {
		return strings.Contains(body, `<ol class="stages"`) && strings.Contains(body, `data-stage=`) && strings.Contains(body, bRacks[0])
	})
	untilEvent(ctx, t, "A's stream carrying the job's end", jobsStream, func(ev sseEvent) bool {
		return ev.Name == "changed" && ev.Data.Job == first && ev.Data.State == "completed"
	})
	untilPage(ctx, t, "the job completed on A's jobs page", console+"/console/jobs", func(body string) bool { return listedState(body, first) == "completed" })
	t.Logf("job %s of %s's rack followed to its end by %s's console %s after the start", first, b.ID, a.ID, time.Since(started).Round(10*time.Millisecond))

	// A batch over two racks through A: its cluster parent renders on A
	// with one child per switch.
	set := &rmspb.NodeSet{}
	for _, rack := range []string{bRacks[0], bRacks[1]} {
		for _, n := range s.Racks[rack] {
			if n.GetType() == rmspb.NodeType_SWITCH_GB200_NVIDIA || n.GetType() == rmspb.NodeType_SWITCH_GB300_NVIDIA {
				set.Nodes = append(set.Nodes, n)
				break
			}
		}
	}
	if len(set.Nodes) != 2 {
		t.Fatalf("switches of racks %v: %v", bRacks[:2], set.Nodes)
	}
	batch, err := a.RMS().BatchDisableSwitchMtls(ctx, &rmspb.BatchDisableSwitchMtlsRequest{
		Nodes: set, Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY}})
	if err != nil || batch.GetResponse().GetJobId() == "" {
		t.Fatalf("batch over two racks: %v, %v", batch, err)
	}
	parent := batch.GetResponse().GetJobId()
	untilPage(ctx, t, "the cluster parent's page on A", console+"/console/jobs/"+parent, func(body string) bool {
		return strings.Contains(body, `<h2>Children <small>2`) && strings.Contains(body, set.Nodes[0].GetNodeId()) &&
			strings.Contains(body, set.Nodes[1].GetNodeId()) && regexp.MustCompile(`data-job="`+parent+`" data-state="(completed|failed)"`).MatchString(body)
	})

	// The parent is a row of A's jobs page, ended, linking to its page.
	untilPage(ctx, t, "the cluster parent on A's jobs page", console+"/console/jobs", func(body string) bool {
		state := listedState(body, parent)
		return (state == "completed" || state == "failed") && strings.Contains(body, `href="/console/jobs/`+parent+`"`)
	})
	t.Logf("cluster parent rendered %s after the start", time.Since(started).Round(10*time.Millisecond))
	// A job running on B's rack when B is killed: A takes the rack over
	// and its console lists the job Failed, interrupted.
	second, err := coldReboot(ctx, s, b.RMS(), bRacks[1])
	if err != nil {
		t.Fatal(err)
	}
	untilPage(ctx, t, "the second job running on A's jobs page", console+"/console/jobs", func(body string) bool { return listedState(body, second) == "running" })
	if err := s.Kill(bi); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	untilSettled(t, s, s.RackIDs(), a)
	t.Logf("%s killed; its racks owned by %s %s later", b.ID, a.ID, time.Since(killed).Round(10*time.Millisecond))
	untilEvent(ctx, t, "A's stream told to reload after the take-over", jobsStream, func(ev sseEvent) bool { return ev.Name == "reload" })
	body := untilPage(ctx, t, "the killed member's job on A's jobs page", console+"/console/jobs", func(body string) bool { return listedState(body, second) == "failed" })
	want := "interrupted: member " + b.ID + " left the cluster"
	if !strings.Contains(body, want) {
		t.Errorf("A's jobs page does not say %q of job %s", want, second)
	}
	if listedState(body, first) != "completed" {
		t.Errorf("A's jobs page lists the first job %s as %q after the take-over, want completed", first, listedState(body, first))
	}
}

//go:build kubernetes

package member

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// providerWait bounds every wait on a member: a one-second membership
// timeout settles in a few seconds; this is generous on a loaded machine.
const providerWait = 60 * time.Second

// sixRacks opens a fresh PostgreSQL database with six registered racks.
func sixRacks(t *testing.T) (*sqlstore.Store, []string) {
	t.Helper()
	st, err := sqlstore.OpenPostgres(t.Context(), storetest.TempPostgresDatabase(t), 4, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var racks []string
	for i := 1; i <= 6; i++ {
		r := fmt.Sprintf("rack-%d", i)
		if err := st.PutRack(t.Context(), store.RackRecord{RackID: r, Family: "GB200"}); err != nil {
			t.Fatal(err)
		}
		racks = append(racks, r)
	}
	return st, racks
}

// untilOwnedBy waits until every rack's unexpired lease is member's.
func untilOwnedBy(t *testing.T, st *sqlstore.Store, member string, racks []string) {
	t.Helper()
	deadline := time.Now().Add(providerWait)
	poll := time.NewTicker(50 * time.Millisecond) // a bounded poll of the store
	defer poll.Stop()
	for {
		why := ""
		for _, r := range racks {
			l, err := st.RackOwner(t.Context(), r)
			if err != nil || l.Member != member || !l.Expires.After(time.Now()) {
				why = fmt.Sprintf("rack %s: %+v, %v", r, l, err)
				break
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("racks not owned by %s within %s: %s", member, providerWait, why)
		}
		<-poll.C
	}
}

// allReleased fails t for every rack whose lease has not ended.
func allReleased(t *testing.T, st *sqlstore.Store, racks []string) {
	t.Helper()
	for _, r := range racks {
		if l, err := st.RackOwner(t.Context(), r); err != nil || l.Expires.After(time.Now()) {
			t.Errorf("rack %s after Stop: %+v, %v; want its lease released", r, l, err)
		}
	}
}

// apiServerDouble answers the part of the Kubernetes API that protoactor's
// k8s provider uses, for one pod: get the pod, patch its labels (a JSON
// patch replacing /metadata/labels) and watch the pods, streaming the pod
// as it changes. The pod is Running and Ready at 127.0.0.1, as the
// kubelet would report it. It records the verbs it was asked for, by the
// names RBAC gives them.
type apiServerDouble struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	pod      corev1.Pod
	verbs    map[string]bool
	other    []string // requests outside the pods API
	watchers []chan corev1.Pod
}

func newAPIServerDouble(t *testing.T, podName string) *apiServerDouble {
	d := &apiServerDouble{t: t, verbs: map[string]bool{}}
	d.pod = corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: "rack-manager", UID: "uid-1", Labels: map[string]string{"app.kubernetes.io/name": "rmsd"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "rmsd", Ready: true}}},
	}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.close)
	return d
}

// close ends the open watches and the server.
func (d *apiServerDouble) close() {
	d.mu.Lock()
	for _, w := range d.watchers {
		close(w)
	}
	d.watchers = nil
	d.mu.Unlock()
	d.srv.Close()
}

func (d *apiServerDouble) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v1/")
	path = strings.TrimPrefix(path, "namespaces/rack-manager/")
	switch {
	case r.Method == http.MethodGet && path == "pods" && r.URL.Query().Get("watch") == "true":
		d.watch(w, r)
	case r.Method == http.MethodGet && path == "pods/"+d.pod.Name:
		d.record("get")
		d.writePod(w)
	case r.Method == http.MethodPatch && path == "pods/"+d.pod.Name:
		d.record("patch")
		d.patch(w, r)
	default:
		d.mu.Lock()
		d.other = append(d.other, r.Method+" "+r.URL.String())
		d.mu.Unlock()
		http.Error(w, "not served by the double", http.StatusNotFound)
	}
}

func (d *apiServerDouble) record(verb string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.verbs[verb] = true
}

func (d *apiServerDouble) writePod(w http.ResponseWriter) {
	d.mu.Lock()
	body, err := json.Marshal(d.pod)
	d.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// patch applies the provider's JSON patch: one replace of the labels.
func (d *apiServerDouble) patch(w http.ResponseWriter, r *http.Request) {
	var ops []struct {
		Op    string            `json:"op"`
		Path  string            `json:"path"`
		Value map[string]string `json:"value"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &ops); err != nil || len(ops) != 1 || ops[0].Op != "replace" || ops[0].Path != "/metadata/labels" ||
		r.Header.Get("Content-Type") != "application/json-patch+json" {
		http.Error(w, fmt.Sprintf("unexpected patch %s (%s)", body, r.Header.Get("Content-Type")), http.StatusUnprocessableEntity)
		return
	}
	d.mu.Lock()
	d.pod.Labels = ops[0].Value
	pod := d.pod
	for _, ch := range d.watchers {
		select {
		case ch <- pod:
		default:
			d.t.Errorf("a pod watch is not reading its events")
		}
	}
	d.mu.Unlock()
	d.writePod(w)
}

// watch streams the pod, as ADDED if it carries the selected label, then
// as MODIFIED on every patch, until the client or the double goes away.
func (d *apiServerDouble) watch(w http.ResponseWriter, r *http.Request) {
	d.record("watch")
	key, value, _ := strings.Cut(r.URL.Query().Get("labelSelector"), "=")
	ch := make(chan corev1.Pod, 16)
	d.mu.Lock()
	d.watchers = append(d.watchers, ch)
	pod := d.pod
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	send := func(kind string, pod corev1.Pod) bool {
		if pod.Labels[key] != value && kind == "ADDED" {
			return true
		}
		line, _ := json.Marshal(map[string]any{"type": kind, "object": pod})
		if _, err := w.Write(append(line, '\n')); err != nil {
			return false
		}
		w.(http.Flusher).Flush()
		return true
	}
	if !send("ADDED", pod) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case pod, ok := <-ch:
			if !ok || !send("MODIFIED", pod) {
				return
			}
		}
	}
}

// labels returns the pod's labels.
func (d *apiServerDouble) labels() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.pod.Labels)
}

// TestKubernetesMemberAgainstAnAPIServerDouble: a member with the
// kubernetes provider labels its own pod (cluster name, remote port, the
// rack kind), sees itself in the pod watch, owns all six racks, and on
// Stop removes its labels and releases the racks; it asks the API for
// get, patch and watch on pods and nothing else (the chart's Role).
func TestKubernetesMemberAgainstAnAPIServerDouble(t *testing.T) {
	host, err := os.Hostname() // the provider names its pod by the hostname
	if err != nil {
		t.Fatal(err)
	}
	api := newAPIServerDouble(t, host)
	st, racks := sixRacks(t)
	port := freePort(t)
	m, err := Start(Config{
		MemberID: "m-k8s", AdvertisedHost: "127.0.0.1", Port: port,
		Provider: ProviderKubernetes, Kubernetes: &rest.Config{Host: api.srv.URL},
		MembershipTimeout: time.Second, Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			m.Stop()
		}
	}()
	untilOwnedBy(t, st, "m-k8s", racks)
	labels := api.labels()
	for k, want := range map[string]string{
		"cluster.proto.actor/cluster":   "rmsd",
		"cluster.proto.actor/port":      fmt.Sprint(port),
		"cluster.proto.actor/kind-rack": "true",
		"app.kubernetes.io/name":        "rmsd",
	} {
		if labels[k] != want {
			t.Errorf("pod label %s = %q, want %q (labels %v)", k, labels[k], want, labels)
		}
	}
	if labels["cluster.proto.actor/member-id"] == "" {
		t.Errorf("pod labels %v: no member id", labels)
	}

	m.Stop()
	stopped = true
	for k := range api.labels() {
		if strings.HasPrefix(k, "cluster.proto.actor/") {
			t.Errorf("pod label %s left after Stop (labels %v)", k, api.labels())
		}
	}
	allReleased(t, st, racks)
	api.mu.Lock()
	defer api.mu.Unlock()
	if got := slices.Sorted(maps.Keys(api.verbs)); !slices.Equal(got, []string{"get", "patch", "watch"}) || len(api.other) > 0 {
		t.Errorf("verbs asked %v and other requests %q; want exactly get, patch and watch on pods", got, api.other)
	}
}

// TestKubernetesOutsideAPodIsRefused: provider kubernetes without an API
// server configuration and outside a pod is refused, saying why.
func TestKubernetesOutsideAPodIsRefused(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	m, err := Start(Config{
		MemberID: "m-k8s", AdvertisedHost: "127.0.0.1", Port: freePort(t),
		Provider: ProviderKubernetes, MembershipTimeout: time.Second, Store: noStore{},
	})
	if err == nil {
		m.Stop()
		t.Fatal("Start outside a pod succeeded")
	}
	if !strings.Contains(err.Error(), "provider kubernetes runs in a pod of the cluster") {
		t.Errorf("Start = %v, want the in-cluster configuration refused", err)
	}
}

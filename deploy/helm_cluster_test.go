package deploy

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rmsd/rmsd/config"
)

// clusterRender is the chart rendered in cluster mode, decoded strictly
// into its API types.
type clusterRender struct {
	sts      *appsv1.StatefulSet
	services map[string]*corev1.Service
	pdb      *policyv1.PodDisruptionBudget
	sa       *corev1.ServiceAccount
	role     *rbacv1.Role
	binding  *rbacv1.RoleBinding
	toml     string
	deploys  int
}

func renderCluster(t *testing.T, args ...string) clusterRender {
	t.Helper()
	dec := newStrictDecoder(t)
	r := clusterRender{services: map[string]*corev1.Service{}}
	for _, doc := range renderDocs(t, "rms", "rack-manager", args...) {
		if emptyDoc(doc) {
			continue
		}
		obj, err := dec.decode([]byte(doc))
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		switch o := obj.(type) {
		case *appsv1.StatefulSet:
			r.sts = o
		case *appsv1.Deployment:
			r.deploys++
		case *corev1.Service:
			r.services[o.Name] = o
		case *policyv1.PodDisruptionBudget:
			r.pdb = o
		case *corev1.ServiceAccount:
			r.sa = o
		case *rbacv1.Role:
			r.role = o
		case *rbacv1.RoleBinding:
			r.binding = o
		case *corev1.ConfigMap:
			if toml, ok := o.Data["config.toml"]; ok {
				r.toml = toml
			}
		}
	}
	if r.sts == nil || r.deploys != 0 {
		t.Fatalf("cluster mode rendered %d Deployments and StatefulSet %v; want only a StatefulSet", r.deploys, r.sts)
	}
	return r
}

// rmsdContainer returns the StatefulSet's rmsd container.
func (r clusterRender) rmsdContainer(t *testing.T) corev1.Container {
	t.Helper()
	for _, c := range r.sts.Spec.Template.Spec.Containers {
		if c.Name == "rmsd" {
			return c
		}
	}
	t.Fatal("no rmsd container")
	return corev1.Container{}
}

// loadAsMember loads the rendered config.toml with rmsd's loader and the
// environment the pod gives the member (its name and IP resolved as the
// kubelet does), and returns its [cluster] section.
func (r clusterRender) loadAsMember(t *testing.T, podName, podIP string) config.Cluster {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(r.toml), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range r.rmsdContainer(t).Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env = append(env, e.Name+"="+podName)
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env = append(env, e.Name+"="+podIP)
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+strings.ReplaceAll(e.Value, "$(POD_IP)", podIP))
		}
	}
	env = append(env, config.EnvDatabaseURL+"=postgres://rms@db.example/rms", config.EnvAllowInsecure+"=1")
	cfg, err := config.Load(config.Source{Path: path, Explicit: true, Environ: env})
	if err != nil {
		var cerr *config.Error
		if !errors.As(err, &cerr) {
			t.Fatal(err)
		}
		for _, p := range cerr.Problems {
			if !strings.Contains(p, "cannot read /etc/rms/") && !strings.HasSuffix(p, "is not a readable directory") {
				t.Errorf("rendered config as member %s: %s", podName, p)
			}
		}
		t.FailNow()
	}
	return cfg.Cluster
}

// TestHelmClusterModeKubernetes: cluster mode with the chart's defaults
// renders a StatefulSet of three members named by their pods, the
// headless Service of the actor remote, a PodDisruptionBudget letting one
// member go at a time, and the Kubernetes provider's account with get,
// patch and watch on pods and nothing more; the rendered configuration
// loads as a valid kubernetes-provider member.
func TestHelmClusterModeKubernetes(t *testing.T) {
	r := renderCluster(t, "-f", "helm/rmsd/ci/cluster-values.yaml")
	spec := r.sts.Spec
	if spec.Replicas == nil || *spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", spec.Replicas)
	}
	headless := r.services[spec.ServiceName]
	if headless == nil {
		t.Fatalf("StatefulSet's serviceName %q is not a rendered Service (%v)", spec.ServiceName, slices.Collect(maps.Keys(r.services)))
	}
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses ||
		len(headless.Spec.Ports) != 1 || headless.Spec.Ports[0].Port != 7000 || headless.Spec.Ports[0].TargetPort.StrVal != "remote" {
		t.Errorf("members' Service: %+v, want headless, not-ready addresses published, port 7000 to remote", headless.Spec)
	}
	grpcSvc := r.services["rms-api-server"]
	if grpcSvc == nil || grpcSvc.Spec.ClusterIP == corev1.ClusterIPNone || !sameLabels(grpcSvc.Spec.Selector, spec.Selector.MatchLabels) {
		t.Errorf("gRPC Service %+v: want a ClusterIP Service selecting every member", grpcSvc)
	}
	if r.pdb == nil || r.pdb.Spec.MaxUnavailable == nil || r.pdb.Spec.MaxUnavailable.IntValue() != 1 ||
		!sameLabels(r.pdb.Spec.Selector.MatchLabels, spec.Selector.MatchLabels) {
		t.Errorf("PodDisruptionBudget %+v: want maxUnavailable 1 over the members", r.pdb)
	}
	pod := spec.Template.Spec
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds <= 935 {
		t.Errorf("terminationGracePeriodSeconds %v, want above the 935 s drain window", pod.TerminationGracePeriodSeconds)
	}
	c := r.rmsdContainer(t)
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "remote" && p.ContainerPort == 7000 }) {
		t.Errorf("container ports %+v: want remote 7000", c.Ports)
	}
	var memberID *corev1.EnvVar
	for i, e := range c.Env {
		if e.Name == "RMS_CLUSTER__MEMBER_ID" {
			memberID = &c.Env[i]
		}
	}
	if memberID == nil || memberID.ValueFrom == nil || memberID.ValueFrom.FieldRef == nil || memberID.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("member id env %+v: want the pod's metadata.name", memberID)
	}

	if r.sa == nil || pod.ServiceAccountName != r.sa.Name || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("pod account %q (automount %v), ServiceAccount %v: want the chart's account with its token", pod.ServiceAccountName, pod.AutomountServiceAccountToken, r.sa)
	}
	if r.role == nil || len(r.role.Rules) != 1 {
		t.Fatalf("Role %+v: want one rule", r.role)
	}
	rule := r.role.Rules[0]
	verbs := slices.Sorted(slices.Values(rule.Verbs))
	if !slices.Equal(rule.APIGroups, []string{""}) || !slices.Equal(rule.Resources, []string{"pods"}) || !slices.Equal(verbs, []string{"get", "patch", "watch"}) {
		t.Errorf("Role rule %+v: want get, patch and watch on core pods only", rule)
	}
	if r.binding == nil || r.binding.RoleRef.Name != r.role.Name || len(r.binding.Subjects) != 1 ||
		r.binding.Subjects[0].Name != r.sa.Name || r.binding.Subjects[0].Namespace != "rack-manager" {
		t.Errorf("RoleBinding %+v: want the Role bound to the ServiceAccount in the release's namespace", r.binding)
	}

	got := r.loadAsMember(t, "rms-rmsd-2", "10.1.2.3")
	want := config.Cluster{Enabled: true, MemberID: "rms-rmsd-2", AdvertisedAddress: "10.1.2.3:7000", Provider: config.ProviderKubernetes, MembershipTimeoutSeconds: 10}
	if got.Enabled != want.Enabled || got.MemberID != want.MemberID || got.AdvertisedAddress != want.AdvertisedAddress ||
		got.Provider != want.Provider || got.MembershipTimeoutSeconds != want.MembershipTimeoutSeconds {
		t.Errorf("member's [cluster] %+v, want %+v", got, want)
	}
}

// TestHelmClusterModeEtcd: the etcd variant renders the endpoints and
// prefix into [cluster], five members, a state volume per member, and no
// API access for the pods.
func TestHelmClusterModeEtcd(t *testing.T) {
	// Plaintext, so that rmsd's loader needs none of the mounted files.
	r := renderCluster(t, "-f", "helm/rmsd/ci/cluster-etcd-values.yaml", "--set", "tls.insecure=true")
	if r.sts.Spec.Replicas == nil || *r.sts.Spec.Replicas != 5 {
		t.Errorf("replicas %v, want 5", r.sts.Spec.Replicas)
	}
	if len(r.sts.Spec.VolumeClaimTemplates) != 1 || r.sts.Spec.VolumeClaimTemplates[0].Name != "state" {
		t.Errorf("volumeClaimTemplates %+v: want one named state", r.sts.Spec.VolumeClaimTemplates)
	}
	pod := r.sts.Spec.Template.Spec
	if r.sa != nil || r.role != nil || r.binding != nil || pod.ServiceAccountName != "" ||
		pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("etcd members got API access: account %v, role %v, pod account %q", r.sa, r.role, pod.ServiceAccountName)
	}
	got := r.loadAsMember(t, "rms-rmsd-0", "10.1.2.4")
	if got.Provider != config.ProviderEtcd || got.EtcdPrefix != "/rmsd-site-a" || len(got.EtcdEndpointList()) != 3 ||
		got.MemberID != "rms-rmsd-0" || got.AdvertisedAddress != "10.1.2.4:7000" {
		t.Errorf("member's [cluster] %+v: want etcd with three endpoints under /rmsd-site-a", got)
	}
}

// TestHelmClusterModeSharedFirmwareDir: cluster.firmwareClaim mounts one
// claim at firmware_dir on every member (the members apply each other's
// stored objects); without it no member mounts a firmware volume.
func TestHelmClusterModeSharedFirmwareDir(t *testing.T) {
	for _, claim := range []string{"", "rms-firmware"} {
		r := renderCluster(t, "-f", "helm/rmsd/ci/cluster-values.yaml", "--set", "cluster.firmwareClaim="+claim)
		pod := r.sts.Spec.Template.Spec
		var vol *corev1.Volume
		for i, v := range pod.Volumes {
			if v.Name == "firmware" {
				vol = &pod.Volumes[i]
			}
		}
		mounted := slices.ContainsFunc(r.rmsdContainer(t).VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "firmware" && m.MountPath == "/var/lib/rms/firmware" && !m.ReadOnly
		})
		switch {
		case claim == "" && (vol != nil || mounted):
			t.Errorf("no firmwareClaim: firmware volume %+v mounted %v, want none", vol, mounted)
		case claim != "" && (vol == nil || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != claim || !mounted):
			t.Errorf("firmwareClaim %q: volume %+v mounted %v, want the claim mounted read-write at firmware_dir", claim, vol, mounted)
		}
	}
}

// TestHelmClusterModeRefusals: cluster-mode values the members cannot run
// with fail the render with a message naming the value.
func TestHelmClusterModeRefusals(t *testing.T) {
	base := []string{"--set", "cluster.enabled=true", "--set", "tls.insecure=true", "--set", "database.url=postgres://rms@db/rms"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no PostgreSQL", []string{"--set", "cluster.enabled=true", "--set", "tls.insecure=true"}, "cluster mode needs the PostgreSQL store"},
		{"a shared claim", append(slices.Clone(base), "--set", "persistence.existingClaim=state"), "persistence.existingClaim cannot be shared"},
		{"etcd without endpoints", append(slices.Clone(base), "--set", "cluster.provider=etcd"), "cluster.etcd.endpoints"},
		{"an unknown provider", append(slices.Clone(base), "--set", "cluster.provider=consul"), `cluster.provider: "consul"`},
		{"a grace period inside the drain window", append(slices.Clone(base), "--set", "terminationGracePeriodSeconds=900"), "is not above the drain window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := helmCommand(append([]string{"template", "rms", "helm/rmsd", "--kube-version", "1.31.0"}, tc.args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("render: %v\n%s\nwant a failure naming %q", err, out, tc.want)
			}
		})
	}
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// helmCommand is helm's command without running it, for renders that
// must fail.
func helmCommand(args ...string) *exec.Cmd {
	bin := os.Getenv("RMSD_HELM")
	if bin == "" {
		bin = ".ci/helm.sh"
	}
	if !filepath.IsAbs(bin) && strings.Contains(bin, "/") {
		bin = filepath.Join("..", bin)
	}
	return exec.Command(bin, args...)
}

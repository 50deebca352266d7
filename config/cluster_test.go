package config

import (
	"slices"
	"strings"
	"testing"
)

func TestClusterOffByDefaultAndUnchecked(t *testing.T) {
	cfg, err := Load(Source{Path: writeConfig(t, "[cluster]\nmember_id = \"not valid!\"\n")})
	if err != nil {
		t.Fatalf("a disabled [cluster] must not be checked: %v", err)
	}
	if cfg.Cluster.Enabled || cfg.Cluster.Provider != ProviderAutomanaged || cfg.Cluster.MembershipTimeoutSeconds != 10 {
		t.Errorf("defaults = %+v", cfg.Cluster)
	}
}

func TestClusterValidConfigLoads(t *testing.T) {
	cfg, err := Load(Source{
		Path: writeConfig(t, `[postgres]
db_url = "postgres://rms@db/rms"
[cluster]
enabled = true
member_id = "rmsd-0"
advertised_address = "10.0.0.1:7000"
seeds = " 10.0.0.1:6330, 10.0.0.2:6330 ,"
membership_timeout_seconds = 4
`),
		Environ: []string{"RMS_CLUSTER__AUTOMANAGED_PORT=6331"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Cluster
	if !c.Enabled || c.MemberID != "rmsd-0" || c.AutomanagedPort != 6331 || c.MembershipTimeoutSeconds != 4 {
		t.Errorf("cluster = %+v", c)
	}
	if got := c.SeedList(); !slices.Equal(got, []string{"10.0.0.1:6330", "10.0.0.2:6330"}) {
		t.Errorf("seeds = %q", got)
	}
}

func TestClusterProblemsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name, give string
		want       []string
	}{
		{"needs PostgreSQL", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nseeds = \"127.0.0.1:6330\"\n",
			[]string{"cluster.enabled: a cluster needs the PostgreSQL store"}},
		{"member id and address", "member_id = \"a b\"\nadvertised_address = \"nohost\"\nseeds = \"127.0.0.1:6330\"\n",
			[]string{"cluster.member_id:", "cluster.advertised_address:", "cluster.enabled:"}},
		{"automanaged needs seeds", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nautomanaged_port = 0\n",
			[]string{"cluster.automanaged_port:", "cluster.seeds:", "cluster.enabled:"}},
		{"bad seed", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nseeds = \"127.0.0.1:99999\"\n",
			[]string{"cluster.seeds: \"127.0.0.1:99999\"", "cluster.enabled:"}},
		{"etcd needs endpoints", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nprovider = \"etcd\"\netcd_prefix = \"x\"\n",
			[]string{"cluster.etcd_endpoints:", "cluster.etcd_prefix:", "cluster.enabled:"}},
		{"etcd over TLS", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nprovider = \"etcd\"\netcd_endpoints = \"https://etcd:2379\"\n",
			[]string{"cluster.etcd_endpoints: \"https://etcd:2379\": TLS", "cluster.enabled:"}},
		{"unknown provider and timeout", "member_id = \"a\"\nadvertised_address = \"127.0.0.1:7000\"\nprovider = \"consul\"\nmembership_timeout_seconds = 0\n",
			[]string{"cluster.provider: \"consul\"", "cluster.membership_timeout_seconds:", "cluster.enabled:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Source{Path: writeConfig(t, "[cluster]\nenabled = true\n"+tc.give)})
			got := problemsOf(t, err)
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want %d of them", got, len(tc.want))
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, w) }) {
					t.Errorf("problems = %q, want one starting %q", got, w)
				}
			}
		})
	}
}

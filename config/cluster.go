package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Cluster makes rmsd one member of several that share a site and one
// PostgreSQL store, each rack owned by one member at a time (docs/cluster.md;
// rmsd's own section). Off by default: rmsd is then the single process it
// always was, and nothing below is read.
type Cluster struct {
	// Enabled joins the cluster at start. It needs the PostgreSQL store
	// ([postgres] db_url or DATABASE_URL): SQLite cannot be shared.
	Enabled bool `koanf:"enabled"`
	// MemberID names this member in the cluster and in the store's rack
	// ownership records: letters, digits, '.', '_' and '-', at most 64,
	// unique in the cluster.
	MemberID string `koanf:"member_id"`
	// AdvertisedAddress is the host:port other members reach this member's
	// actor remote at; the remote listens on that port.
	AdvertisedAddress string `koanf:"advertised_address"`
	// BindAddress is the address the actor remote listens on; empty means
	// the host of advertised_address.
	BindAddress string `koanf:"bind_address"`
	// Provider is how members find each other: "automanaged" (a seed
	// list; each member answers health checks on automanaged_port), "etcd"
	// (etcd_endpoints) or "kubernetes" (the pods of the Helm chart's
	// StatefulSet: the member's pod is labelled and the pods watched
	// through the in-cluster API; docs/cluster.md "Providers").
	Provider string `koanf:"provider"`
	// Seeds lists every member's host:automanaged_port, comma-separated,
	// this member's own included (provider automanaged).
	Seeds string `koanf:"seeds"`
	// AutomanagedPort is the port this member answers the automanaged
	// provider's health checks on (provider automanaged).
	AutomanagedPort int `koanf:"automanaged_port"`
	// EtcdEndpoints lists the etcd client URLs (http://host:port),
	// comma-separated (provider etcd). TLS and authentication towards
	// etcd are not supported yet.
	EtcdEndpoints string `koanf:"etcd_endpoints"`
	// EtcdPrefix is the key prefix under which members register in etcd
	// (provider etcd); members of one cluster share it.
	EtcdPrefix string `koanf:"etcd_prefix"`
	// MembershipTimeoutSeconds is how long a member that stopped answering
	// keeps its racks: it is the rack ownership lease in the store, renewed
	// every quarter of it. A member that cannot renew stops acting on its
	// racks before the lease ends; another member may take them once it
	// has ended.
	MembershipTimeoutSeconds int `koanf:"membership_timeout_seconds"`
}

// The membership providers of [cluster] provider.
const (
	ProviderAutomanaged = "automanaged"
	ProviderEtcd        = "etcd"
	ProviderKubernetes  = "kubernetes"
)

// memberIDPattern is what a member id may look like.
var memberIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// SeedList returns the automanaged seeds, trimmed, without empty entries.
func (c Cluster) SeedList() []string { return splitList(c.Seeds) }

// EtcdEndpointList returns the etcd endpoints, trimmed, without empty
// entries.
func (c Cluster) EtcdEndpointList() []string { return splitList(c.EtcdEndpoints) }

// splitList splits a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// problems checks [cluster] when it is enabled; databaseURL is the
// PostgreSQL URL the store would use (empty: SQLite).
func (c Cluster) problems(databaseURL string) []string {
	if !c.Enabled {
		return nil
	}
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if databaseURL == "" {
		add("cluster.enabled: a cluster needs the PostgreSQL store that every member shares; set [postgres] db_url or DATABASE_URL (SQLite cannot be shared)")
	}
	if !memberIDPattern.MatchString(c.MemberID) {
		add("cluster.member_id: %q is not 1-64 letters, digits, '.', '_' or '-'", c.MemberID)
	}
	if err := checkHostPort(c.AdvertisedAddress); err != nil {
		add("cluster.advertised_address: %v", err)
	}
	switch c.Provider {
	case ProviderAutomanaged:
		if c.AutomanagedPort < 1 || c.AutomanagedPort > 65535 {
			add("cluster.automanaged_port: %d is not a TCP port (1-65535)", c.AutomanagedPort)
		}
		seeds := c.SeedList()
		if len(seeds) == 0 {
			add("cluster.seeds: provider automanaged needs every member's host:automanaged_port")
		}
		for _, s := range seeds {
			if err := checkHostPort(s); err != nil {
				add("cluster.seeds: %v", err)
			}
		}
	case ProviderEtcd:
		if len(c.EtcdEndpointList()) == 0 {
			add("cluster.etcd_endpoints: provider etcd needs at least one endpoint")
		}
		for _, e := range c.EtcdEndpointList() {
			if strings.HasPrefix(e, "https://") {
				add("cluster.etcd_endpoints: %q: TLS towards etcd is not supported yet; use an http:// endpoint on a trusted network", e)
			}
		}
		if !strings.HasPrefix(c.EtcdPrefix, "/") {
			add("cluster.etcd_prefix: %q must start with /", c.EtcdPrefix)
		}
	case ProviderKubernetes:
	default:
		add("cluster.provider: %q is not one of automanaged, etcd, kubernetes", c.Provider)
	}
	if t := c.MembershipTimeoutSeconds; t < 1 || t > 300 {
		add("cluster.membership_timeout_seconds: %d is outside 1-300", t)
	}
	return p
}

// checkHostPort checks a host:port with a port in 1-65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port is not 1-65535", s)
	}
	return nil
}

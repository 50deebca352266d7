package member

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/store"
)

// Store is what a member needs of the shared store: rack ownership, the
// members' views and the registered racks.
type Store interface {
	store.RackOwners
	store.ClusterMembers
	ListRacks(ctx context.Context) ([]store.RackRecord, error)
}

// Config is one member's setting.
type Config struct {
	// ClusterName groups the members; members of other names ignore
	// each other.
	ClusterName string
	// MemberID names this member in the store's leases and its logs.
	MemberID string
	// BindHost and Port are where the actor remote listens; AdvertisedHost
	// is the host other members reach it at.
	BindHost, AdvertisedHost string
	Port                     int
	// Provider is how members find each other: ProviderAutomanaged (the
	// default), ProviderEtcd or ProviderKubernetes (provider.go).
	Provider string
	// Seeds are every member's host:port of the automanaged provider, and
	// AutomanagedPort this member's.
	Seeds           []string
	AutomanagedPort int
	// EtcdEndpoints are the etcd client URLs and EtcdPrefix the key under
	// which the members register (provider etcd).
	EtcdEndpoints []string
	EtcdPrefix    string
	// Kubernetes reaches the API server (provider kubernetes); nil means
	// the pod's in-cluster configuration.
	Kubernetes *KubernetesAPI
	// MembershipTimeout is the rack lease's length; the membership checks
	// and rack touches run every quarter of it.
	MembershipTimeout time.Duration
	// Store is the shared store.
	Store Store
	// OpenRack builds a rack's service once this member holds the rack's
	// lease; nil leaves the member owning racks without serving them
	// (their forwarded calls answer UNAVAILABLE).
	OpenRack OpenRack
	// HandOverTimeout is how long a rack leaving this member (the cluster
	// moved it, or the member drains) waits for its running jobs to end
	// before it interrupts them ([workflows] drain_timeout_seconds); zero
	// means a quarter of the membership timeout.
	HandOverTimeout time.Duration
	// ReloadRackNodes reloads one rack's registered nodes from the store
	// (another member changed them); ReloadAllNodes reloads every rack's,
	// every membership timeout. Nil: the member keeps no node registry.
	ReloadRackNodes func(ctx context.Context, rackID string) error
	ReloadAllNodes  func(ctx context.Context) error
	// Log receives the member's lines; protoactor's own go to
	// ActorSystemLog's logger when set.
	Log zerolog.Logger
}

// validate checks the settings Start cannot do without.
func (c Config) validate() error {
	switch {
	case c.MemberID == "":
		return errors.New("member: no member id")
	case c.Store == nil:
		return errors.New("member: no store")
	case c.MembershipTimeout < 40*time.Millisecond:
		return errors.New("member: membership timeout below 40ms")
	}
	return c.validateProvider()
}

// handOverTimeout is HandOverTimeout or its default.
func (c Config) handOverTimeout() time.Duration {
	if c.HandOverTimeout > 0 {
		return c.HandOverTimeout
	}
	return c.tick()
}

// tick is how often the member touches its racks, the provider checks the
// members and a rack lease is renewed: a quarter of the timeout.
func (c Config) tick() time.Duration { return c.MembershipTimeout / 4 }

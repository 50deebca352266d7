package member

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The membership providers a member can find the others with.
const (
	// ProviderAutomanaged polls every seed's health port (Seeds,
	// AutomanagedPort).
	ProviderAutomanaged = "automanaged"
	// ProviderEtcd registers the member under EtcdPrefix in etcd with a
	// lease protoactor keeps alive, and watches the others' keys.
	ProviderEtcd = "etcd"
	// ProviderKubernetes labels the member's own pod and watches the pods
	// carrying the cluster's label (protoactor's k8s provider). Only a
	// binary built with the tag kubernetes has it (kubernetes.go).
	ProviderKubernetes = "kubernetes"
)

// errKubernetesNotBuilt refuses provider kubernetes in a binary built
// without it.
var errKubernetesNotBuilt = errors.New("member: provider kubernetes is not in this rmsd: it was built without the kubernetes provider; " +
	"use the container image, or build rmsd with it (go build -tags kubernetes ./cmd/rmsd)")

// ProviderBuiltIn refuses a provider this binary was built without (the
// kubernetes provider needs the build tag kubernetes); nil for the others,
// known or not.
func ProviderBuiltIn(name string) error {
	if name == ProviderKubernetes && !kubernetesBuiltIn {
		return errKubernetesNotBuilt
	}
	return nil
}

// etcdDialTimeout bounds the etcd client's first connection, and so
// Start, when no endpoint answers.
const etcdDialTimeout = 5 * time.Second

// validateProvider checks the settings of the chosen provider.
func (c Config) validateProvider() error {
	switch c.providerName() {
	case ProviderAutomanaged:
		if len(c.Seeds) == 0 {
			return errors.New("member: no seeds")
		}
	case ProviderEtcd:
		if len(c.EtcdEndpoints) == 0 {
			return errors.New("member: no etcd endpoints")
		}
	case ProviderKubernetes:
		return ProviderBuiltIn(ProviderKubernetes)
	default:
		return fmt.Errorf("member: unknown provider %q", c.Provider)
	}
	return nil
}

// providerName is the provider Start uses.
func (c Config) providerName() string {
	if c.Provider == "" {
		return ProviderAutomanaged
	}
	return c.Provider
}

// newProvider builds the membership provider of c. protoactor starts it
// with the member; free, never nil, frees what the provider leaves
// behind once the cluster has shut it down.
func (c Config) newProvider() (p cluster.ClusterProvider, free func(), err error) {
	switch c.providerName() {
	case ProviderEtcd:
		return newEtcdProvider(c.EtcdEndpoints, c.EtcdPrefix)
	case ProviderKubernetes:
		p, err := newKubernetesProvider(c.Kubernetes)
		if err != nil {
			return nil, nil, err
		}
		return p, func() {}, nil
	default:
		// protoactor only logs a health port it cannot bind, and the
		// member would then never be seen by the others: refuse it here.
		probe, err := net.Listen("tcp", fmt.Sprintf(":%d", c.AutomanagedPort))
		if err != nil {
			return nil, nil, fmt.Errorf("member: the automanaged health port: %w", err)
		}
		_ = probe.Close()
		return automanaged.NewWithConfig(c.tick(), c.AutomanagedPort, c.Seeds...), func() {}, nil
	}
}

// newEtcdProvider builds protoactor's etcd provider. That provider never
// closes the etcd client it makes: its connection, watch and lease
// keep-alive would outlive the member. The provider returned closes it
// once protoactor's provider has shut down; close closes it if the
// cluster never started.
func newEtcdProvider(endpoints []string, prefix string) (cluster.ClusterProvider, func(), error) {
	inner, err := etcd.NewWithConfig(prefix, clientv3.Config{Endpoints: endpoints, DialTimeout: etcdDialTimeout})
	if err != nil {
		return nil, nil, fmt.Errorf("member: the etcd client for %v: %w", endpoints, err)
	}
	client, err := etcdClientOf(inner)
	if err != nil {
		return nil, nil, err
	}
	p := &etcdProvider{Provider: inner, client: client}
	// The provider's first read waits for etcd without a deadline, and so
	// would Start: ask etcd once, within the dial timeout, first.
	ctx, cancel := context.WithTimeout(context.Background(), etcdDialTimeout)
	defer cancel()
	if _, err := client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		p.close()
		return nil, nil, fmt.Errorf("member: etcd at %v does not answer: %w", endpoints, err)
	}
	return p, p.close, nil
}

// etcdProvider is protoactor's etcd provider with its client closed on
// Shutdown.
type etcdProvider struct {
	*etcd.Provider
	client *clientv3.Client
	once   sync.Once
}

// Shutdown deregisters the member (protoactor's provider) and closes the
// etcd client, which ends the provider's watch and lease keep-alive.
func (p *etcdProvider) Shutdown(graceful bool) error {
	err := p.Provider.Shutdown(graceful)
	p.close()
	return err
}

func (p *etcdProvider) close() { p.once.Do(func() { _ = p.client.Close() }) }

// etcdClientOf reads the client protoactor's etcd provider keeps in an
// unexported field (at the pinned version it offers no way to close it).
// A provider of another shape is an error, not a guess.
func etcdClientOf(p *etcd.Provider) (*clientv3.Client, error) {
	f := reflect.ValueOf(p).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*clientv3.Client]() {
		return nil, errors.New("member: protoactor's etcd provider keeps no *clientv3.Client in its field client; this rmsd was built against another protoactor version")
	}
	client := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*clientv3.Client)
	if client == nil {
		return nil, errors.New("member: protoactor's etcd provider has no client")
	}
	return client, nil
}

//go:build kubernetes

package member

import (
	"fmt"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/k8s"
	"k8s.io/client-go/rest"
)

// The kubernetes provider is built in: this file links protoactor's k8s
// provider and client-go, whose package initialisation every process of
// the binary pays for, cluster or not; kubernetes_absent.go stands in
// without the build tag kubernetes.
const kubernetesBuiltIn = true

// KubernetesAPI is how the member reaches the API server: client-go's
// REST configuration.
type KubernetesAPI = rest.Config

// newKubernetesProvider builds protoactor's k8s provider on kube, or on
// the pod's in-cluster configuration when kube is nil.
func newKubernetesProvider(kube *KubernetesAPI) (cluster.ClusterProvider, error) {
	if kube == nil {
		var err error
		if kube, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("member: provider kubernetes runs in a pod of the cluster: %w", err)
		}
	}
	p, err := k8s.NewWithConfig(kube)
	if err != nil {
		return nil, fmt.Errorf("member: the Kubernetes API client: %w", err)
	}
	return p, nil
}

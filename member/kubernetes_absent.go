//go:build !kubernetes

package member

import "github.com/asynkron/protoactor-go/cluster"

// The kubernetes provider is not built in: without the build tag
// kubernetes the binary links neither protoactor's k8s provider nor
// client-go (kubernetes.go), and provider kubernetes is refused.
const kubernetesBuiltIn = false

// KubernetesAPI stands in for client-go's REST configuration, which a
// binary without the kubernetes provider does not link; the refusal
// comes before it would be read.
type KubernetesAPI struct{}

// newKubernetesProvider refuses: the provider is not in this binary.
func newKubernetesProvider(*KubernetesAPI) (cluster.ClusterProvider, error) {
	return nil, errKubernetesNotBuilt
}

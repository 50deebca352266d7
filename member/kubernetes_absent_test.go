//go:build !kubernetes

package member

import (
	"strings"
	"testing"
	"time"
)

// TestKubernetesNotBuiltInIsRefused: a binary built without the tag
// kubernetes refuses provider kubernetes at Start, before joining, saying
// how to get a binary that has it.
func TestKubernetesNotBuiltInIsRefused(t *testing.T) {
	m, err := Start(Config{
		MemberID: "m-k8s", AdvertisedHost: "127.0.0.1", Port: freePort(t),
		Provider: ProviderKubernetes, Kubernetes: &KubernetesAPI{},
		MembershipTimeout: time.Second, Store: noStore{},
	})
	if err == nil {
		m.Stop()
		t.Fatal("Start with provider kubernetes succeeded in a binary built without it")
	}
	for _, want := range []string{"built without the kubernetes provider", "go build -tags kubernetes", "container image"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start = %v, want an error saying %q", err, want)
		}
	}
	for _, name := range []string{ProviderAutomanaged, ProviderEtcd} {
		if err := ProviderBuiltIn(name); err != nil {
			t.Errorf("ProviderBuiltIn(%q) = %v, want nil", name, err)
		}
	}
}

package switchcert

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// Services whose mTLS state the jobs manage, by upstream's names.
const (
	ServiceNVUEAPI            = "nvue-api"
	ServiceTelemetryInterface = "scale-up-fabric-telemetry-interface" // gNMI
	ServiceFabricManager      = "scale-up-fabric-manager"             // nmx-controller
	ServiceFabricTelemetry    = "scale-up-fabric-telemetry"           // nmx-telemetry
)

// nvueService is the /nvue_v1/system service behind a bindable service.
var nvueService = map[string]string{ServiceNVUEAPI: "api", ServiceTelemetryInterface: "gnmi-server"}

// installedName is how a certificate lists a service it is installed for.
var installedName = map[string]string{ServiceNVUEAPI: "nvue-rest-api", ServiceTelemetryInterface: "gnmi-server"}

// clusterApp is the NMX cluster app behind a fabric service.
var clusterApp = map[string]string{ServiceFabricManager: "nmx-controller", ServiceFabricTelemetry: "nmx-telemetry"}

// Deps are what the workflows need.
type Deps struct {
	// Nodes runs each device step.
	Nodes *nodeops.Runner
	// Now is the clock of timelines and run ids (time.Now when nil).
	Now func() time.Time
	// CLIPause is the pause between two NVOS CLI commands (300 ms when
	// zero).
	CLIPause time.Duration
	// HelloRetry is the pause between the tries of each post-install test
	// hello (6 s when zero); there are five tries per service.
	HelloRetry time.Duration
	// ManagerSettle is the pause after each cluster app manager @update
	// of an NMX binding (5 s when zero).
	ManagerSettle time.Duration
	// Fabric reaches a switch's fabric services: the cluster and its app
	// managers (the NMX bindings), NMX-C and gNMI (their test hellos, over
	// the outbound mTLS identity). Nil: the NMX services cannot be bound
	// and those hellos not made.
	Fabric *fabric.Options
}

func (d Deps) withDefaults() Deps {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.CLIPause <= 0 {
		d.CLIPause = 300 * time.Millisecond
	}
	if d.HelloRetry <= 0 {
		d.HelloRetry = 6 * time.Second
	}
	if d.ManagerSettle <= 0 {
		d.ManagerSettle = 5 * time.Second
	}
	return d
}

// step runs one device step on n's switch adapter through the node runner.
func (d Deps) step(ctx context.Context, n hw.Node, f func(ctx context.Context, c platform.SwitchCertifier) error) error {
	return d.Nodes.One(ctx, n, func(ctx context.Context, _ int, dev platform.Device) error {
		c, ok := dev.(platform.SwitchCertifier)
		if !ok {
			return fmt.Errorf("%s: %w: not an NVOS switch", n.ID, hw.ErrUnsupported)
		}
		return f(ctx, c)
	})
}

// errNotSupported marks a service rmsd cannot bind or test without a
// fabric client.
var errNotSupported = errors.New("switchcert: not supported")

// fabricSwitch builds the fabric client of n (Close it), or fails when
// rmsd has none.
func (d Deps) fabricSwitch(n hw.Node, what string) (*fabric.Switch, error) {
	if d.Fabric == nil {
		return nil, fmt.Errorf("%w: %s needs the scale-up fabric client, which this rmsd has not configured", errNotSupported, what)
	}
	if n.Host == nil {
		return nil, fmt.Errorf("%s: %w: no host endpoint", n.ID, hw.ErrUnsupported)
	}
	return fabric.New(n.ID, *n.Host, *d.Fabric)
}

// classify maps why a workflow stopped to the job error callers see.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, nvue.ErrUnauthorized), errors.Is(err, sshsftp.ErrAuth):
		return messages.ErrorUnauthenticated
	case errors.Is(err, nvue.ErrTimeout), errors.Is(err, sshsftp.ErrTimeout), errors.Is(err, sshsftp.ErrStalled),
		errors.Is(err, context.DeadlineExceeded):
		return messages.ErrorTimeout
	case errors.Is(err, errNotSupported), errors.Is(err, hw.ErrUnsupported):
		return messages.ErrorInvalidArgument
	case errors.Is(err, nvue.ErrInvalidResponse):
		return messages.ErrorInvalidResponse
	case errors.Is(err, nvue.ErrServer):
		return messages.ErrorServerError
	case errors.Is(err, nvue.ErrTransport), errors.Is(err, sshsftp.ErrConnect), errors.Is(err, nvue.ErrNotFound):
		return messages.ErrorClientError
	default:
		return messages.ErrorOther
	}
}

// scrub hides key (and each of its lines) wherever a device may have
// echoed it into s.
func scrub(s string, key hw.Secret) string {
	if key.IsZero() {
		return s
	}
	forms := []string{key.Reveal()}
	for _, line := range strings.Split(key.Reveal(), "\n") {
		if line = strings.TrimSpace(line); len(line) >= 16 {
			forms = append(forms, line)
		}
	}
	return hw.Scrub(s, forms...) // each also as JSON escapes it
}

package fabricsync

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rmsd/rmsd/hw/fabric"
)

// errInjected is the failure a model switch is told to give.
var errInjected = errors.New("injected failure")

// modelState is what a model switch holds: what a snapshot and a rollback
// are about.
type modelState struct {
	Cluster string
	IPs     fabric.NodeIPs
	Manager string
	Binding fabric.MTLSBinding
	Static  map[fabric.ConfigKey]string
}

// model is an in-memory NVOS switch that implements Switch: NMX-C answers
// only while the cluster is enabled and the controller's manager is
// enabled, as on a real switch; the control plane is configured once a
// topology is set and the controller ran since.
type model struct {
	mu      sync.Mutex
	id      string
	slot    *int64
	st      modelState
	plane   string
	calls   []string // mutating calls, in order
	sets    [][]fabric.ConfigEntry
	restart int
	// fail names a mutating method that applies its change and then
	// fails ("SetCluster", "SetNodeIPs", ...); failRead a method that
	// fails without doing anything.
	fail, failRead string
	// undoFails makes every mutating call fail once fail has fired.
	undoFails bool
	// managerResetsBinding makes enabling external access drop the mTLS
	// binding.
	managerResetsBinding bool
	fired                bool
}

func newModel(id string, slot int64) *model {
	s := slot
	return &model{id: id, slot: &s, plane: fabric.PlaneStopped, st: modelState{
		Cluster: "disabled", Manager: "disabled",
		Static: map[fabric.ConfigKey]string{
			{File: fabric.FileFM, Key: fabric.KeyTopology}: "none",
			{File: fabric.FileFM, Key: "FM_TIMEOUT"}:       "30",
			{File: "nmx_config", Key: "LOG_LEVEL"}:         "info",
		},
	}}
}

func (m *model) state() modelState {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st
	s.Static = map[fabric.ConfigKey]string{}
	for k, v := range m.st.Static {
		s.Static[k] = v
	}
	return s
}

func (m *model) mutations() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

func (m *model) restarts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.restart
}

// mutate records a mutating call and applies it, failing as told.
func (m *model) mutate(ctx context.Context, method string, apply func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fired && m.undoFails {
		return fmt.Errorf("switch %s: %s: %w", m.id, method, errInjected)
	}
	m.calls = append(m.calls, method)
	apply()
	if m.fail == method && !m.fired {
		m.fired = true
		return fmt.Errorf("switch %s: %s: %w", m.id, method, errInjected)
	}
	return nil
}

func (m *model) read(method string) error {
	if m.failRead == method {
		return fmt.Errorf("switch %s: %s: %w", m.id, method, errInjected)
	}
	return nil
}

// nmxc fails unless NMX-C is reachable; called with mu held.
func (m *model) nmxc() error {
	if m.st.Cluster != "enabled" || m.st.Manager != "enabled" {
		return fmt.Errorf("switch %s: NMX-C unavailable", m.id)
	}
	return nil
}

func (m *model) Cluster(context.Context) (fabric.ClusterState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("Cluster"); err != nil {
		return fabric.ClusterState{}, err
	}
	return fabric.ClusterState{State: m.st.Cluster}, nil
}

func (m *model) SetCluster(ctx context.Context, enabled bool) (fabric.ClusterState, error) {
	err := m.mutate(ctx, "SetCluster", func() {
		m.st.Cluster = "disabled"
		m.plane = fabric.PlaneStopped
		if enabled {
			m.st.Cluster = "enabled"
			m.plane = fabric.PlaneUnconfigured
		}
	})
	if err != nil {
		return fabric.ClusterState{}, err
	}
	return m.Cluster(context.Background())
}

func (m *model) App(_ context.Context, app string) (fabric.AppStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("App"); err != nil {
		return fabric.AppStatus{}, err
	}
	if app != fabric.AppController || m.st.Cluster != "enabled" {
		return fabric.AppStatus{}, nil // a disabled cluster has no apps
	}
	return fabric.AppStatus{Installed: true, Status: "ok", ControlPlane: m.plane, Manager: m.st.Manager}, nil
}

func (m *model) SetAppManager(ctx context.Context, _ string, enabled bool) error {
	m.mu.Lock()
	on := m.st.Cluster == "enabled"
	m.mu.Unlock()
	if !on {
		return fmt.Errorf("switch %s: %s is not installed", m.id, fabric.AppController)
	}
	return m.mutate(ctx, "SetAppManager", func() {
		m.st.Manager = map[bool]string{true: "enabled", false: "disabled"}[enabled]
		if enabled && m.managerResetsBinding {
			m.st.Binding = fabric.MTLSBinding{}
		}
	})
}

func (m *model) RestartApp(ctx context.Context, _ string) error {
	return m.mutate(ctx, "RestartApp", func() {
		m.restart++
		if m.st.Cluster == "enabled" {
			m.plane = fabric.PlaneUnconfigured
			if m.st.Static[fabric.ConfigKey{File: fabric.FileFM, Key: fabric.KeyTopology}] != "none" {
				m.plane = fabric.PlaneConfigured
			}
		}
	})
}

func (m *model) NodeIPs(context.Context) (fabric.NodeIPs, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("NodeIPs"); err != nil {
		return fabric.NodeIPs{}, err
	}
	return m.st.IPs, nil
}

func (m *model) SetNodeIPs(ctx context.Context, want fabric.NodeIPs) error {
	return m.mutate(ctx, "SetNodeIPs", func() { m.st.IPs = want })
}

func (m *model) Hello(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("Hello"); err != nil {
		return err
	}
	return m.nmxc()
}

func (m *model) StaticConfig(_ context.Context, keys []fabric.ConfigKey) ([]fabric.ConfigEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("StaticConfig"); err != nil {
		return nil, err
	}
	if err := m.nmxc(); err != nil {
		return nil, err
	}
	var out []fabric.ConfigEntry
	for _, k := range keys {
		if v, ok := m.st.Static[k]; ok {
			out = append(out, fabric.ConfigEntry{File: k.File, Key: k.Key, Value: v})
		}
	}
	return out, nil
}

func (m *model) SetStaticConfig(ctx context.Context, entries []fabric.ConfigEntry) error {
	m.mu.Lock()
	err := m.nmxc()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return m.mutate(ctx, "SetStaticConfig", func() {
		m.sets = append(m.sets, append([]fabric.ConfigEntry(nil), entries...))
		for _, e := range entries {
			m.st.Static[e.Name()] = e.Value
		}
	})
}

func (m *model) WaitConfigured(context.Context) (fabric.AppStatus, error) {
	m.mu.Lock()
	if err := m.read("WaitConfigured"); err != nil {
		m.mu.Unlock()
		return fabric.AppStatus{}, err
	}
	if m.st.Cluster == "enabled" && m.plane != fabric.PlaneConfigured &&
		m.st.Static[fabric.ConfigKey{File: fabric.FileFM, Key: fabric.KeyTopology}] != "none" {
		m.plane = fabric.PlaneConfigured
	}
	m.mu.Unlock()
	return m.App(context.Background(), fabric.AppController)
}

func (m *model) NMXMTLS(context.Context) (fabric.MTLSBinding, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.read("NMXMTLS"); err != nil {
		return fabric.MTLSBinding{}, err
	}
	if m.st.Cluster != "enabled" {
		return fabric.MTLSBinding{}, nil // no controller app to read it from
	}
	return m.st.Binding, nil
}

func (m *model) SetNMXMTLS(ctx context.Context, b fabric.MTLSBinding) error {
	return m.mutate(ctx, "SetNMXMTLS", func() { m.st.Binding = b })
}

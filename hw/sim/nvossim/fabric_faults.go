package nvossim

// Fault knobs and observations of the scale-up fabric.

// FabricStep names a mutating fabric step a fault can fail.
type FabricStep string

// The mutating fabric steps.
const (
	// StepClusterState: nv config apply of a staged cluster state.
	StepClusterState FabricStep = "cluster-state"
	// StepNodeIPs: a revision that stages node addresses ends invalid.
	StepNodeIPs FabricStep = "node-ips"
	// StepStaticConfig: SetStaticConfig answers NMX_ST_GENERIC_ERROR.
	StepStaticConfig FabricStep = "static-config"
	// StepAppRestart: an app @stop or @start action fails.
	StepAppRestart FabricStep = "app-restart"
	// StepMTLS: a manager @update action, or the nv action that restores
	// the manager's encryption, fails.
	StepMTLS FabricStep = "mtls-binding"
	// StepEncryptionUpdate: a manager's encryption @update action fails
	// (the nv action that sets it still works).
	StepEncryptionUpdate FabricStep = "encryption-update"
)

// fabricFaults are the fabric's armed faults.
type fabricFaults struct {
	failNext    map[FabricStep]string
	unavailable int // NMX-C answers Unavailable this many more times; < 0: until cleared
	sticky      map[[2]string]bool
	degraded    map[string]bool // component kind -> reported abnormal
}

// FailNextFabricStep makes the next occurrence of step fail with msg (an
// empty msg disarms it).
func (s *Switch) FailNextFabricStep(step FabricStep, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.fabricLocked().faults
	if f.failNext == nil {
		f.failNext = map[FabricStep]string{}
	}
	if msg == "" {
		delete(f.failNext, step)
	} else {
		f.failNext[step] = msg
	}
	s.log.Info().Str("step", string(step)).Str("issue", msg).Msg("fault: fail next fabric step")
}

// takeFaultLocked disarms and returns the failure armed for step ("" when
// none).
func (s *Switch) takeFaultLocked(step FabricStep) string {
	f := &s.fabricLocked().faults
	msg := f.failNext[step]
	delete(f.failNext, step)
	return msg
}

// NMXCUnavailable makes NMX-C answer gRPC Unavailable to the next n calls;
// n < 0 until it is called again with 0, which clears the fault.
func (s *Switch) NMXCUnavailable(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fabricLocked().faults.unavailable = n
	s.log.Info().Int("calls", n).Msg("fault: nmx-c unavailable")
}

// StaticConfigWontStick makes SetStaticConfig accept but silently drop new
// values of file/key while on.
func (s *Switch) StaticConfigWontStick(file, key string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.fabricLocked().faults
	if f.sticky == nil {
		f.sticky = map[[2]string]bool{}
	}
	f.sticky[[2]string{file, key}] = on
	s.log.Info().Str("file", file).Str("key", key).Bool("on", on).Msg("fault: static config will not stick")
}

// ClusterEnabled reports whether the fabric cluster runs.
func (s *Switch) ClusterEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.fabricLocked().enabled
}

// NodeIPs returns the applied primary and secondary node addresses.
func (s *Switch) NodeIPs() (primary, secondary string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	c := s.fabricLocked()
	return c.primary, c.second
}

// SetNodeIPs sets the node addresses directly, as an operator would.
func (s *Switch) SetNodeIPs(primary, secondary string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.fabricLocked()
	c.primary, c.second = primary, secondary
}

// StaticConfig returns the controller's static config value of file/key.
func (s *Switch) StaticConfig(file, key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.fabricLocked().static[file][key]
	return v, ok
}

// SetStaticConfig sets a static config value directly, as an operator
// would (the running controller sees it after its next restart).
func (s *Switch) SetStaticConfig(file, key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.fabricLocked()
	if c.static[file] == nil {
		c.static[file] = map[string]string{}
	}
	c.static[file][key] = value
}

// AppRestarts counts the completed starts of a cluster app by @start or nv
// action start (the starts that come with enabling the cluster excluded).
func (s *Switch) AppRestarts(app string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	if a, ok := s.fabricLocked().apps[app]; ok {
		return a.restarts
	}
	return 0
}

// AppManager returns the state of a cluster app's external gRPC access.
func (s *Switch) AppManager(app string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	if a, ok := s.fabricLocked().apps[app]; ok {
		return a.manager
	}
	return ""
}

// ControlPlane returns the controller's control-plane state ("" when the
// cluster is disabled).
func (s *Switch) ControlPlane() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.advanceLocked(now)
	if !s.fabricLocked().enabled {
		return ""
	}
	_, _, plane := s.appViewLocked(appController, now)
	return plane
}

// GNMIEnabled reports whether the gNMI server runs.
func (s *Switch) GNMIEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fabricLocked().gnmi
}

// EnableGNMI turns the gNMI server on or off, as an applied
// nv set system gnmi-server state would.
func (s *Switch) EnableGNMI(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fabricLocked().gnmi = on
}

// AppMTLS returns a cluster app manager's encryption (mtls or none) and
// the certificate and CA certificate ids it is bound to.
func (s *Switch) AppMTLS(app string) (encryption, certificate, ca string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	if a := s.fabricLocked().apps[app]; a != nil {
		return a.encryption, a.certID, a.caID
	}
	return "", "", ""
}

// NMXMTLS returns the controller manager's encryption (mtls or none) and
// the certificate and CA certificate ids it is bound to.
func (s *Switch) NMXMTLS() (encryption, certificate, ca string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	a := s.fabricLocked().apps[appController]
	return a.encryption, a.certID, a.caID
}

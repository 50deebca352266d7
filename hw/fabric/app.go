package fabric

// ManagerEnabled reports whether the app's external gRPC access is on
// (manager state enabled or active).
func (a AppStatus) ManagerEnabled() bool { return managerOn(a.Manager) }

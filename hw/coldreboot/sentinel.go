package coldreboot

// SentinelNode is the node id of the coordinator job: one per rack, so the
// job engine refuses a second cold reboot of the same rack.
func SentinelNode(rackID string) string { return rackID + ":cold-reboot" }

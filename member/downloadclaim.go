package member

import "time"

// downloadClaimTimeouts is how many membership timeouts a member's
// firmware download goes without a heartbeat before another member takes
// it over: more than the four after which gossip blocks a silent member
// (cluster.WithHeartbeatExpiration in Start), which then fences itself
// and stops.
const downloadClaimTimeouts = 6

// DownloadClaimAfter is the bound the firmware catalog of a member with
// this membership timeout is given (catalog.Options.ClaimAfter): another
// member's interrupted download whose heartbeat, and whose member's row
// in the store, are this old is taken over. The catalog stamps its
// heartbeats every membership timeout (a sixth of the bound).
func DownloadClaimAfter(membershipTimeout time.Duration) time.Duration {
	return downloadClaimTimeouts * membershipTimeout
}

package fabric

import (
	"time"

	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// Options are what a Switch is built with besides the switch itself.
type Options struct {
	// NVUE is the daemon's shared NVUE pool (required).
	NVUE *nvue.Pool
	// SSH is the policy of the nv CLI connections (one per operation).
	SSH sshsftp.Options
	// NMXC configures the NMX-C client (port, gateway id, TLS, deadlines).
	NMXC nmxc.Options
	// GNMI configures the gNMI Capabilities check.
	GNMI gnmicap.Options
	// Timing paces the waits; zero fields take upstream's values.
	Timing Timing
}

// Timing are the waits of southbound §3.12. Tests and --simulate shorten
// them; upstream's values are the defaults.
type Timing struct {
	// VerifyAttempts and VerifyInterval pace the re-reads after a cluster
	// state or app manager change (default 4 reads, 30 s apart).
	VerifyAttempts int
	VerifyInterval time.Duration
	// ManagerSettle is the pause after a cluster app action or manager
	// update before it is read back (default 5 s).
	ManagerSettle time.Duration
	// GNMISettle is the pause after the gNMI server state was applied;
	// GNMIVerifyDelays are the pauses before each verification read
	// (default 15 s, then 20, 30, 30 s).
	GNMISettle       time.Duration
	GNMIVerifyDelays []time.Duration
	// ConfiguredWindow and ConfiguredPoll pace the wait for the controller's
	// control plane to report CONFIGURED (default 3 min, every 5 s).
	ConfiguredWindow time.Duration
	ConfiguredPoll   time.Duration
}

// Upstream's values.
const (
	DefaultVerifyAttempts   = 4
	DefaultVerifyInterval   = 30 * time.Second
	DefaultManagerSettle    = 5 * time.Second
	DefaultGNMISettle       = 15 * time.Second
	DefaultConfiguredWindow = 3 * time.Minute
	DefaultConfiguredPoll   = 5 * time.Second
)

// DefaultGNMIVerifyDelays are the pauses before each gNMI state re-read.
var DefaultGNMIVerifyDelays = []time.Duration{20 * time.Second, 30 * time.Second, 30 * time.Second}

func (t Timing) withDefaults() Timing {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if t.VerifyAttempts <= 0 {
		t.VerifyAttempts = DefaultVerifyAttempts
	}
	set(&t.VerifyInterval, DefaultVerifyInterval)
	set(&t.ManagerSettle, DefaultManagerSettle)
	set(&t.GNMISettle, DefaultGNMISettle)
	set(&t.ConfiguredWindow, DefaultConfiguredWindow)
	set(&t.ConfiguredPoll, DefaultConfiguredPoll)
	if len(t.GNMIVerifyDelays) == 0 {
		t.GNMIVerifyDelays = DefaultGNMIVerifyDelays
	}
	return t
}

// Scaled returns t with every pause and window multiplied by f (for a
// simulator running faster than real time); attempts are unchanged.
func (t Timing) Scaled(f float64) Timing {
	t = t.withDefaults()
	sc := func(d time.Duration) time.Duration { return max(time.Millisecond, time.Duration(float64(d)*f)) }
	t.VerifyInterval, t.ManagerSettle, t.GNMISettle = sc(t.VerifyInterval), sc(t.ManagerSettle), sc(t.GNMISettle)
	t.ConfiguredWindow, t.ConfiguredPoll = sc(t.ConfiguredWindow), sc(t.ConfiguredPoll)
	delays := make([]time.Duration, len(t.GNMIVerifyDelays))
	for i, d := range t.GNMIVerifyDelays {
		delays[i] = sc(d)
	}
	t.GNMIVerifyDelays = delays
	return t
}

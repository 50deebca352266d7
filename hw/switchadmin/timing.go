package switchadmin

import "time"

// Timing bounds the waits of the workflows. Zero fields take upstream's
// values (southbound §3.9, §3.10, §4).
type Timing struct {
	// ResetPoll is the pause between two probes while a factory-reset
	// switch reboots (default 5 s).
	ResetPoll time.Duration
	// ResetTimeout bounds a factory reset from its acceptance until the
	// factory login authenticates again (default 1800 s).
	ResetTimeout time.Duration
	// LoginRetry and LoginTimeout pace the login with the new password
	// after an expired admin password was changed (default every 5 s for
	// 60 s).
	LoginRetry   time.Duration
	LoginTimeout time.Duration
	// SDNActionTimeout bounds the SDN factory-default action (default 60 s).
	SDNActionTimeout time.Duration
	// SDNPoll and SDNTimeout pace the wait for the fabric manager to come
	// back unconfigured (default every 5 s for 120 s).
	SDNPoll    time.Duration
	SDNTimeout time.Duration
}

// Upstream's bounds.
const (
	DefaultResetPoll        = 5 * time.Second
	DefaultResetTimeout     = 1800 * time.Second
	DefaultLoginRetry       = 5 * time.Second
	DefaultLoginTimeout     = 60 * time.Second
	DefaultSDNActionTimeout = 60 * time.Second
	DefaultSDNPoll          = 5 * time.Second
	DefaultSDNTimeout       = 120 * time.Second
)

func (t Timing) withDefaults() Timing {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&t.ResetPoll, DefaultResetPoll)
	set(&t.ResetTimeout, DefaultResetTimeout)
	set(&t.LoginRetry, DefaultLoginRetry)
	set(&t.LoginTimeout, DefaultLoginTimeout)
	set(&t.SDNActionTimeout, DefaultSDNActionTimeout)
	set(&t.SDNPoll, DefaultSDNPoll)
	set(&t.SDNTimeout, DefaultSDNTimeout)
	return t
}

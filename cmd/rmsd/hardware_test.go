package main

import (
	"testing"
	"time"

	"github.com/rmsd/rmsd/config"
)

// The SSH policy of switch hosts follows [switches] and [workflows].
func TestSSHOptionsFollowConfig(t *testing.T) {
	cfg := config.Default()
	o := sshOptions(cfg.Switches, cfg.Workflows)
	if o.Port != 22 || o.HostKey.String() != "accept-any" || o.UploadTimeout != time.Hour || o.StepTimeout != 30*time.Second {
		t.Fatalf("defaults: port %d, host key %s, upload %v, step %v", o.Port, o.HostKey, o.UploadTimeout, o.StepTimeout)
	}
	s, w := cfg.Switches, cfg.Workflows
	s.SSHPort, s.SSHHostKeyPolicy, s.SSHKnownHosts = 2022, config.HostKeyKnownHosts, "/etc/rmsd/known_hosts"
	w.SFTPUploadTimeoutSeconds, w.SFTPStepTimeoutSeconds = 600, 5
	o = sshOptions(s, w)
	if o.Port != 2022 || o.HostKey.String() != "known-hosts:/etc/rmsd/known_hosts" || o.UploadTimeout != 10*time.Minute ||
		o.StepTimeout != 5*time.Second {
		t.Fatalf("configured: port %d, host key %s, upload %v, step %v", o.Port, o.HostKey, o.UploadTimeout, o.StepTimeout)
	}
}

package nvossim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// runFabricCommand runs the nv commands of the scale-up fabric; ok is false
// for any other command. nv config apply is shared with the mTLS commands
// (runTLSCommand calls applyFabricLocked).
func (s *Switch) runFabricCommand(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	line := strings.Join(args, " ")
	c := s.fabricLocked()
	switch line {
	case "set cluster state enabled", "set cluster state disabled":
		on := strings.HasSuffix(line, "enabled")
		c.pendingState = &on
		return 0, true
	case "set system gnmi-server state enabled", "set system gnmi-server state disabled":
		on := strings.HasSuffix(line, "enabled")
		c.pendingGNMI = &on
		return 0, true
	case "show system gnmi-server -o json", "show system gnmi-server --output json":
		b, _ := json.Marshal(map[string]any{"state": onOffWord(c.gnmi), "port": s.portLocked(s.gnmiLn), "version": "0.10.0"})
		fmt.Fprintln(stdout, string(b))
		return 0, true
	}
	rest, isApp := strings.CutPrefix(line, "action ")
	if !isApp {
		return 0, false
	}
	verb, rest, _ := strings.Cut(rest, " ")
	appRest, isApp := strings.CutPrefix(rest, "cluster apps ")
	if !isApp {
		return 0, false
	}
	name, tail, _ := strings.Cut(appRest, " ")
	a, known := c.apps[name]
	if !known {
		fmt.Fprintf(stderr, "Error: unknown cluster app %s\n", name)
		return 1, true
	}
	if !c.enabled {
		fmt.Fprintln(stderr, "Error: cluster is not enabled")
		return 1, true
	}
	switch {
	case verb == "start" && tail == "":
		if !a.running {
			s.startAppLocked(name, s.now())
			a.restarts++
		}
	case verb == "update" && (tail == "manager enabled" || tail == "manager disabled"):
		if !a.running {
			fmt.Fprintf(stderr, "Error: app %s is not running\n", name)
			return 1, true
		}
		a.manager = strings.TrimPrefix(tail, "manager ")
	case verb == "update" && tail == "manager encryption mtls":
		if a.certID == "" || a.caID == "" {
			fmt.Fprintln(stderr, "Error: mtls needs a certificate and a ca-certificate")
			return 1, true
		}
		a.encryption = "mtls"
	case verb == "restore" && tail == "manager encryption":
		if msg := s.takeFaultLocked(StepMTLS); msg != "" {
			fmt.Fprintln(stderr, "Error: "+msg)
			return 1, true
		}
		a.encryption, a.certID, a.caID = "none", "", ""
	default:
		return 0, false
	}
	fmt.Fprintln(stdout, "Action succeeded")
	return 0, true
}

func onOffWord(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

// applyFabricLocked applies the staged cluster and gNMI states; it reports
// whether anything changed, or the failure armed for the cluster state.
func (s *Switch) applyFabricLocked() (changed bool, failure string) {
	c := s.fabricLocked()
	if c.pendingState != nil {
		on := *c.pendingState
		c.pendingState = nil
		if msg := s.takeFaultLocked(StepClusterState); msg != "" {
			c.pendingGNMI = nil
			return false, msg
		}
		if c.enabled != on {
			s.setClusterLocked(on, s.now())
			changed = true
		}
	}
	if c.pendingGNMI != nil {
		if c.gnmi != *c.pendingGNMI {
			c.gnmi, changed = *c.pendingGNMI, true
		}
		c.pendingGNMI = nil
	}
	return changed, ""
}

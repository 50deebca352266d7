package simrack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/hw/sim"
)

// SwitchTLSDomain is the switch domain of the embedded default when the
// configuration names none ([switches] default_switch_domain).
const SwitchTLSDomain = "simulated"

// SwitchTLS is where the switch TLS material of a simulation lives: a
// private directory beside the nodes file, holding switch_cert_root
// (CertRoot, Dir/switch) and client_tls_root (ClientRoot, Dir/client).
type SwitchTLS struct {
	Dir        string
	CertRoot   string
	ClientRoot string
}

// SwitchTLSDir is the private directory of the simulation's switch TLS
// material: simulated-switch-tls beside the nodes file.
func SwitchTLSDir(nodesFile string) string {
	return filepath.Join(filepath.Dir(nodesFile), "simulated-switch-tls")
}

// SwitchTLSMaterial is the switch TLS material of a simulation, issued by
// the fleet's CA: Switch is what ConfigureSwitchCertificate installs on the
// switches (naming every switch's address, id and host name), Client is
// rmsd's own identity towards them. Both keys are secrets: never log them.
type SwitchTLSMaterial struct {
	Switch, Client sim.SiteMaterial
}

// IssueSwitchTLS issues the material from the fleet's CA. The CA is new at
// every start, so the material is issued again at every start.
func IssueSwitchTLS(fleet *sim.Fleet) (SwitchTLSMaterial, error) {
	var ips, names []string
	for _, n := range fleet.Nodes() {
		if n.Switch == nil || n.Host.Host() == "" {
			continue
		}
		names = append(names, n.ID)
		if n.Host.IP != "" {
			ips = append(ips, n.Host.IP)
		}
		if n.Host.HostName != "" {
			names = append(names, n.Host.HostName)
		}
	}
	switchMat, err := fleet.IssueSiteMaterial("simulated switches", ips, names)
	if err != nil {
		return SwitchTLSMaterial{}, err
	}
	client, err := fleet.IssueSiteMaterial("rmsd", nil, []string{"rmsd"})
	if err != nil {
		return SwitchTLSMaterial{}, err
	}
	return SwitchTLSMaterial{Switch: switchMat, Client: client}, nil
}

// SwitchTLSRoots are the roots of dir: switch_cert_root and
// client_tls_root.
func SwitchTLSRoots(dir string) SwitchTLS {
	return SwitchTLS{Dir: dir, CertRoot: filepath.Join(dir, "switch"), ClientRoot: filepath.Join(dir, "client")}
}

// WriteSwitchTLS writes m under dir, replacing the last run's:
// switch/<domain>/{ca.pem, client.pem, client.key} and
// client/<domain>/{ca.pem, client.pem, client.key}. Directories are 0700
// and files 0600 (each replaced atomically); a dir that is a symbolic link
// or not a directory is refused.
func WriteSwitchTLS(dir, domain string, m SwitchTLSMaterial) error {
	out := SwitchTLSRoots(dir)
	// Every level private, outermost first: a directory that existed keeps
	// no wider mode, and a link is refused before anything is written.
	for _, d := range []string{dir, out.CertRoot, out.ClientRoot} {
		if err := privateDir(d); err != nil {
			return err
		}
	}
	for root, mat := range map[string]sim.SiteMaterial{out.CertRoot: m.Switch, out.ClientRoot: m.Client} {
		if err := writeMaterial(filepath.Join(root, domain), mat); err != nil {
			return err
		}
	}
	return nil
}

// writeMaterial writes m's three files into dir, each replaced atomically.
func writeMaterial(dir string, m sim.SiteMaterial) error {
	if err := privateDir(dir); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"ca.pem": m.CA, "client.pem": m.Cert, "client.key": m.Key} {
		if err := replaceFile(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("write simulated switch TLS file %s: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// privateDir makes dir (and its missing parents) and sets it 0700; an
// existing dir must be a real directory, not a symbolic link.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("simulated switch TLS directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("simulated switch TLS directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("simulated switch TLS directory %s: %w", dir, errors.New("not a directory (a symbolic link?)"))
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("simulated switch TLS directory: %w", err)
	}
	return nil
}

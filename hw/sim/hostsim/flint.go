package hostsim

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// mst answers mst start and mst status -v.
func (h *Host) mst(cmd []string, root bool, stdout, stderr io.Writer) int {
	if !root {
		fmt.Fprintln(stderr, "-E- You must be root to use mst tool")
		return 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case len(cmd) == 2 && cmd[1] == "start":
		h.mstLoaded = true
		fmt.Fprint(stdout, "Starting MST (Mellanox Software Tools) driver set\nLoading MST PCI module - Success\n"+
			"Loading MST PCI configuration module - Success\nCreate devices\n")
		return 0
	case len(cmd) >= 2 && cmd[1] == "status":
		fmt.Fprint(stdout, "MST modules:\n------------\n")
		if h.mstLoaded {
			fmt.Fprint(stdout, "    MST PCI module loaded\n    MST PCI configuration module loaded\n")
		} else {
			fmt.Fprint(stdout, "    MST PCI module is not loaded\n    MST PCI configuration module is not loaded\n")
		}
		fmt.Fprint(stdout, "PCI devices:\n------------\n")
		fmt.Fprintf(stdout, "%-24s%-30s%-16s%-16s%-40s%s\n", "DEVICE_TYPE", "MST", "PCI", "RDMA", "NET", "NUMA")
		for i, d := range h.devices {
			if h.lost {
				break
			}
			mst, vf := "NA", "NA"
			if h.mstLoaded {
				mst, vf = d.path, d.path+".1"
			}
			fmt.Fprintf(stdout, "%-24s%-30s%-16s%-16s%-40s%d\n", string(d.family)+"(rev:0)", mst, d.pci,
				fmt.Sprintf("mlx5_%d", 2*i), fmt.Sprintf("net-ibp%ds0", i+1), i/3)
			fmt.Fprintf(stdout, "%-24s%-30s%-16s%-16s%-40s%d\n", string(d.family)+"(rev:0)", vf,
				strings.TrimSuffix(d.pci, "0")+"1", fmt.Sprintf("mlx5_%d", 2*i+1), fmt.Sprintf("net-ibp%ds1", i+1), i/3)
		}
		return 0
	}
	fmt.Fprintln(stderr, "-E- Unknown mst command")
	return 1
}

// flint answers device and image queries and burns.
func (h *Host) flint(cmd []string, root bool, stdout, stderr io.Writer) int {
	var dev, img, op string
	for i := 1; i < len(cmd); i++ {
		switch a := cmd[i]; a {
		case "-d", "--device", "-i", "--image":
			if i+1 >= len(cmd) {
				fmt.Fprintf(stderr, "-E- Missing argument for flag %s\n", a)
				return 1
			}
			if a == "-d" || a == "--device" {
				dev = cmd[i+1]
			} else {
				img = cmd[i+1]
			}
			i++
		case "--yes", "-y", "full":
		default:
			op = a
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var d *device
	if dev != "" {
		if d = h.deviceLocked(dev); d == nil || !h.mstLoaded {
			fmt.Fprintf(stderr, "-E- Cannot open Device: %s. No such file or directory. MFE_CR_ERROR\n", dev)
			return 1
		}
		if !root {
			fmt.Fprintf(stderr, "-E- Cannot open Device: %s. Permission denied. MFE_CR_ERROR\n", dev)
			return 1
		}
	}
	var psid, version string
	if img != "" {
		b, ok := h.files[path.Clean(img)]
		if !ok {
			fmt.Fprintf(stderr, "-E- Cannot open %s: No such file or directory\n", img)
			return 1
		}
		if psid, version = imageIdentity(b); psid == "" || version == "" {
			fmt.Fprintf(stderr, "-E- Cannot open %s: Not a valid image file\n", img)
			return 1
		}
	}
	switch {
	case (op == "q" || op == "query") && d != nil && img == "":
		printQuery(stdout, d.psid, d.flash, d.running)
		return 0
	case (op == "q" || op == "query") && d == nil && img != "":
		printQuery(stdout, psid, version, version)
		return 0
	case (op == "b" || op == "burn") && d != nil && img != "":
		return h.burnLocked(d, psid, version, stdout, stderr)
	}
	fmt.Fprintln(stderr, "-E- Invalid command: see flint -h")
	return 1
}

func (h *Host) deviceLocked(p string) *device {
	for _, d := range h.devices {
		if d.path == p {
			return d
		}
	}
	return nil
}

func (h *Host) burnLocked(d *device, psid, version string, stdout, stderr io.Writer) int {
	switch {
	case psid != d.psid:
		fmt.Fprintf(stderr, "\n    Current FW version on flash:  %s\n    New FW version:               %s\n\n", d.flash, version)
		fmt.Fprintf(stderr, "-E- PSID mismatch. The PSID on flash (%s) differs from the PSID in the given image (%s).\n", d.psid, psid)
		return 1
	case version == d.flash && d.flash != d.running:
		fmt.Fprintln(stderr, "-I- The firmware image was already updated on flash, pending reset.")
		return 1
	case h.failBurns > 0:
		h.failBurns--
		fmt.Fprintln(stderr, "-E- Burning FS4 image failed: Flash write error: MFE_FLASH_WRITE_ERROR")
		return 1
	}
	fmt.Fprintf(stdout, "\n    Current FW version on flash:  %s\n    New FW version:               %s\n\n", d.flash, version)
	fmt.Fprint(stdout, "FSMST_INITIALIZE -   OK\nWriting Boot image component -   OK\n-I- To load new FW run mlxfwreset or reboot machine.\n")
	d.flash = version
	h.burns = append(h.burns, d.path)
	h.log.Info().Str("device", d.path).Str("version", version).Msg("flint burn")
	return 0
}

// printQuery writes flint's query output; a flash that differs from what
// runs adds the running version, as flint does before a reset.
func printQuery(w io.Writer, psid, flash, running string) {
	fmt.Fprintf(w, "Image type:            FS4\nFW Version:            %s\n", flash)
	if running != flash {
		fmt.Fprintf(w, "FW Version(Running):   %s\n", running)
	}
	fmt.Fprintf(w, "FW Release Date:       14.3.2024\nProduct Version:       %s\n", flash)
	fmt.Fprint(w, "Rom Info:              type=UEFI version=14.32.17 cpu=AMD64,AARCH64\n"+
		"Description:           UID                GuidsNumber\n"+
		"Base GUID:             b83fd20300a1b2c4        16\n"+
		"Base MAC:              b83fd2a1b2c4            16\n"+
		"Image VSD:             N/A\nDevice VSD:            N/A\n")
	fmt.Fprintf(w, "PSID:                  %s\nSecurity Attributes:   secure-fw\n", psid)
}

// imageIdentity reads the PSID and version a simulated image declares.
func imageIdentity(b []byte) (psid, version string) {
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "PSID":
			psid = strings.TrimSpace(v)
		case "FW Version":
			version = strings.TrimSpace(v)
		}
	}
	return psid, version
}

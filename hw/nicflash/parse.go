package nicflash

import (
	"errors"
	"fmt"
	"strings"
)

// mstDevice is one physical device mst status -v lists.
type mstDevice struct {
	family Family
	path   string
}

// parseMSTStatus lists the physical devices of the supported families in
// mst status -v output (upstream's parse_mst_status): lines naming a
// /dev/mst path, before any "Inband devices:" section, leaving out the
// functions beyond the first (paths ending in ".<digit>").
func parseMSTStatus(out string) ([]mstDevice, error) {
	header := false
	var devs []mstDevice
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "DEVICE_TYPE") && strings.Contains(line, "MST") {
			header = true
			continue
		}
		if strings.Contains(line, "Inband devices:") {
			break
		}
		i := strings.Index(line, "/dev/mst/")
		if i < 0 {
			continue
		}
		fields := strings.Fields(line[i:])
		path := fields[0]
		if dot := strings.LastIndexByte(path, '.'); dot >= 0 && len(path)-dot == 2 && path[dot+1] >= '0' && path[dot+1] <= '9' {
			continue
		}
		if f, ok := familyOfMSTType(strings.TrimSpace(line[:i])); ok {
			devs = append(devs, mstDevice{family: f, path: path})
		}
	}
	if !header {
		return nil, fmt.Errorf("%w: mst status output has no DEVICE_TYPE/MST header", ErrInvalidOutput)
	}
	return devs, nil
}

// query is what flint query reports of a device or an image.
type query struct {
	psid    string
	flash   string // "FW Version": the image on flash
	running string // "FW Version(Running)", else the flash version
}

// parseQuery reads flint query output (upstream's parse_flint_query, plus
// the running version flint prints while a burn waits for a reset).
func parseQuery(out, what string) (query, error) {
	var q query
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "FW Version":
			q.flash = strings.TrimSpace(v)
		case "FW Version(Running)":
			q.running = strings.TrimSpace(v)
		case "PSID":
			q.psid = strings.TrimSpace(v)
		}
	}
	switch {
	case q.psid == "":
		return q, fmt.Errorf("%w: flint query of %s reported no PSID", ErrInvalidOutput, what)
	case q.flash == "":
		return q, fmt.Errorf("%w: flint query of %s reported no FW Version", ErrInvalidOutput, what)
	}
	if q.running == "" {
		q.running = q.flash
	}
	return q, nil
}

// Errors, for callers to classify.
var (
	// ErrNoHost: the node has no host endpoint with a user and password.
	ErrNoHost = errors.New("nicflash: no host endpoint credentials")
	// ErrHostTool: mst or flint is missing on the host.
	ErrHostTool = errors.New("nicflash: required host tool unavailable")
	// ErrSudo: the login cannot run the tools as root.
	ErrSudo = errors.New("nicflash: sudo unavailable")
	// ErrInvalidOutput: a tool answered something unreadable.
	ErrInvalidOutput = errors.New("nicflash: unexpected tool output")
	// ErrIncompatible: the images and the devices do not form a safe plan.
	ErrIncompatible = errors.New("nicflash: incompatible firmware selection")
	// ErrImage: an image file is unusable (name, extension).
	ErrImage = errors.New("nicflash: invalid firmware image")
	// ErrFlash: a burn failed twice.
	ErrFlash = errors.New("nicflash: flint burn failed")
	// ErrNotReady: the host OS did not become ready in time.
	ErrNotReady = errors.New("nicflash: host OS not ready")
	// ErrDiscovery: starting MST or reading the devices failed, before
	// anything was staged or burned; a power cycle may cure it.
	ErrDiscovery = errors.New("nicflash: device discovery failed")
	// ErrVersionMismatch: a device does not run its image's version.
	ErrVersionMismatch = errors.New("nicflash: version mismatch")
)

package artifactsim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"strings"

	"github.com/rmsd/rmsd/hw/sim"
)

// Artifact is a published file, as a manifest names it.
type Artifact struct {
	// Name is the file name (the last element of Path).
	Name string
	// Path is where it is published, e.g. "sw-gb200/1.3.6/bmc.fwpkg".
	Path string
	// URL is its download URL.
	URL string
	// Sha256 is the lower-case hex digest of its bytes.
	Sha256 string
	Size   int64
	// Version is the firmware version a package published with
	// PublishPackage carries ("" otherwise).
	Version string
}

// Publish serves body at path (which may have directories, like an
// Artifactory repository path) and describes it. Publishing a path again
// replaces its content.
func (s *Server) Publish(p string, body []byte) Artifact {
	p = trimName(p)
	s.mu.Lock()
	s.files[p] = append([]byte(nil), body...)
	s.mu.Unlock()
	sum := sha256.Sum256(body)
	return Artifact{
		Name: path.Base(p), Path: p, URL: s.url + (&url.URL{Path: "/" + p}).EscapedPath(),
		Sha256: hex.EncodeToString(sum[:]), Size: int64(len(body)),
	}
}

// PublishPackage publishes a simulator firmware package of size bytes that
// a flashed BMC or power shelf reports as version (sim.FirmwarePackage).
// NVOS hosts take the version from the file name, so give p a name that
// carries it as a dotted number when the package is for a switch.
func (s *Server) PublishPackage(p, version string, size int) Artifact {
	a := s.Publish(p, sim.FirmwarePackage(version, size))
	a.Version = version
	return a
}

func trimName(p string) string { return strings.TrimPrefix(p, "/") }

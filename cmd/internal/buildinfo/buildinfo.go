// Package buildinfo reports the version of the running binary from the Go
// build information: the module version and the VCS revision it was built
// from.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// stamped can be set at link time (-ldflags "-X .../buildinfo.stamped=v1.2.3")
// by release builds that want a fixed version string.
var stamped string

// Version returns a string such as "v0.3.0 (rev 1a2b3c4d5e6f)" or
// "devel (rev 1a2b3c4d5e6f, modified)". It is "unknown" when the binary
// carries no build information at all.
func Version() string {
	if stamped != "" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return format(info)
}

func format(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" || version == "(devel)" {
		version = "devel"
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if strings.Contains(version, rev) {
		// Go already stamped a pseudo-version made from the revision.
		return version
	}
	var b strings.Builder
	b.WriteString(version + " (rev " + rev)
	if modified {
		b.WriteString(", modified")
	}
	b.WriteString(")")
	return b.String()
}

// Build is the build's identity as the metrics label it: the version
// (Version), the full VCS revision, the commit time and the Go toolchain.
// Fields the binary does not carry are "unknown".
type Build struct {
	Version   string
	Revision  string
	Date      string
	GoVersion string
}

// Read returns the running binary's Build.
func Read() Build {
	b := Build{Version: Version(), Revision: "unknown", Date: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Date = s.Value
		}
	}
	return b
}

// Describe is what `PROGRAM --version` prints: the version, the full commit,
// its time and the Go toolchain, one per line.
func Describe(program string) string {
	b := Read()
	return fmt.Sprintf("%s %s\ncommit: %s\nbuilt:  %s\ngo:     %s\n", program, b.Version, b.Revision, b.Date, b.GoVersion)
}

package download

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// Temporary files are named ".<name>.part-<16 hex digits>" by a single
// rmsd and ".<name>.part-<tag>-<16 hex digits>" by a cluster member, tag
// being MemberTag of its member id: members sharing one firmware_dir
// then reap only the leftovers of their own downloads (ReapTempFiles).
const tempSuffix = ".part-"

// untaggedTemp matches the temporary files of a single rmsd.
var untaggedTemp = regexp.MustCompile(`^\..+\.part-[0-9a-f]{16}$`)

// MemberTag is the tag the temporary files of cluster member id carry:
// the first 8 hex digits of the SHA-256 of id, so that any member id
// makes a short, fixed-alphabet part of a file name. It is "" for the
// empty id (a single rmsd), whose files are untagged.
func MemberTag(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// tempPattern matches the temporary files written with tag ("" the
// untagged ones).
func tempPattern(tag string) *regexp.Regexp {
	if tag == "" {
		return untaggedTemp
	}
	return regexp.MustCompile(`^\..+\.part-` + regexp.QuoteMeta(tag) + `-[0-9a-f]{16}$`)
}

// tempName is a fresh temporary file name for artifact name, tagged with
// tag unless it is "".
func tempName(name, tag string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	if tag != "" {
		tag += "-"
	}
	return "." + name + tempSuffix + tag + hex.EncodeToString(b[:])
}

package manifest

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// payloadExtensions are the file name endings of firmware and image
// packages.
var payloadExtensions = []string{
	".fwpkg", ".pldm", ".bin", ".tar", ".tar.gz", ".tgz", ".vme", ".ima", ".hpm", ".bfb", ".img",
}

// isPayload reports whether a location is a package rmsd downloads: it has a
// Location, and its Type is Firmware, or a generic Type (none, Binary,
// Software, Image) with a package file name. Certificates, recovery images,
// documents and Misc files never are.
func isPayload(l Location) bool {
	if strings.TrimSpace(l.Location) == "" {
		return false
	}
	switch Normalise(l.Type) {
	case "firmware":
		return true
	case "", "binary", "software", "image":
		name := l.FileName
		if strings.TrimSpace(name) == "" {
			name = path.Base(l.Location)
		}
		return hasPayloadExtension(name)
	}
	return false
}

func hasPayloadExtension(name string) bool {
	lower := strings.ToLower(strings.TrimSpace(name))
	for _, ext := range payloadExtensions {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

var (
	sha256Pattern    = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	cacheNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
)

// maxCacheName bounds a cache file name (a file name element on Linux).
const maxCacheName = 255

// unsupportedSchemes are refused by name, with a clearer message than an
// unknown scheme gets.
var unsupportedSchemes = map[string]bool{"s3": true, "ftp": true, "ftps": true, "sftp": true, "tftp": true}

// artifactOf resolves a payload location into an artifact, or says why it
// cannot be downloaded.
func artifactOf(l Location, component string) (Artifact, string) {
	loc := strings.TrimSpace(l.Location)
	src, reason := sourceOf(loc, l.LocationType)
	if reason != "" {
		return Artifact{}, reason
	}
	var base string
	if src.Kind == SourceFile {
		base = filepath.Base(src.Path)
	} else {
		u, _ := url.Parse(src.URL) // parsed by sourceOf
		base = path.Base(u.Path)
	}
	if len(base) > maxCacheName || !cacheNamePattern.MatchString(base) {
		return Artifact{}, fmt.Sprintf("Location %s gives the cache file name %s; it must be one path element of letters, digits, '.', '_', '+' and '-', not starting with '.'",
			hw.QuoteShort(src.String()), hw.QuoteShort(base))
	}
	sha := strings.TrimSpace(l.Sha256)
	switch {
	case sha == "":
		return Artifact{}, fmt.Sprintf("Location %s has no Sha256; rmsd downloads only artifacts it can verify", hw.QuoteShort(src.String()))
	case !sha256Pattern.MatchString(sha):
		return Artifact{}, fmt.Sprintf("Sha256 %s of %s is not 64 hexadecimal digits", hw.QuoteShort(sha), hw.QuoteShort(src.String()))
	}
	return Artifact{Name: base, Source: src, Sha256: strings.ToLower(sha), Component: component}, ""
}

// sourceOf reads a Location and its LocationType. It never quotes a URL
// with its credentials.
func sourceOf(loc, locationType string) (Source, string) {
	lt := strings.ToLower(strings.TrimSpace(locationType))
	switch lt {
	case "", "http", "https", "artifactory", "jfrog", "file":
	default:
		return Source{}, fmt.Sprintf("LocationType %s is not supported; use http, https, artifactory, jfrog or file", hw.QuoteShort(locationType))
	}
	scheme := ""
	if i := strings.Index(loc, "://"); i > 0 {
		scheme = strings.ToLower(loc[:i])
	}
	switch {
	case scheme == "":
		// A bare local path.
		if lt != "" && lt != "file" {
			return Source{}, fmt.Sprintf("Location %s is a local path but LocationType is %s", hw.QuoteShort(loc), hw.QuoteShort(locationType))
		}
		return Source{Kind: SourceFile, Path: loc}, ""
	case unsupportedSchemes[scheme]:
		return Source{}, fmt.Sprintf("Location %s: %s sources are not supported; use http, https, artifactory, jfrog or file", hw.QuoteShort(redactURL(loc)), scheme)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return Source{}, fmt.Sprintf("Location is not a valid URL: %v", urlErrorReason(err))
	}
	if u.User != nil {
		return Source{}, fmt.Sprintf("Location %s carries credentials in the URL, which are not supported; artifactory and jfrog sources take the request's access_token",
			hw.QuoteShort(redactURL(loc)))
	}
	switch scheme {
	case "file":
		if lt != "" && lt != "file" {
			return Source{}, fmt.Sprintf("Location %s is a file URL but LocationType is %s", hw.QuoteShort(loc), hw.QuoteShort(locationType))
		}
		if u.Host != "" && u.Host != "localhost" {
			return Source{}, fmt.Sprintf("Location %s names a remote host; file sources must be local", hw.QuoteShort(loc))
		}
		if u.Path == "" {
			return Source{}, fmt.Sprintf("Location %s names no file", hw.QuoteShort(loc))
		}
		return Source{Kind: SourceFile, Path: u.Path}, ""
	case "http", "https":
		if lt == "file" {
			return Source{}, fmt.Sprintf("Location %s is an %s URL but LocationType is %s", hw.QuoteShort(redactURL(loc)), scheme, hw.QuoteShort(locationType))
		}
		if u.Host == "" {
			return Source{}, fmt.Sprintf("Location %s names no host", hw.QuoteShort(redactURL(loc)))
		}
		kind := SourceHTTP
		if lt == "artifactory" || lt == "jfrog" {
			kind = SourceArtifactory
		}
		return Source{Kind: kind, URL: u.String()}, ""
	}
	return Source{}, fmt.Sprintf("Location %s: %s sources are not supported; use http, https, artifactory, jfrog or file", hw.QuoteShort(redactURL(loc)), hw.QuoteShort(scheme))
}

// urlErrorReason is url.Parse's complaint without the URL it quotes (which
// could hold credentials).
func urlErrorReason(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return "unparsable"
}

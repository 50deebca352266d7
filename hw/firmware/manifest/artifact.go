package manifest

import (
	"net/url"
)

// SourceKind says how an artifact is fetched.
type SourceKind int

// The supported artifact sources (rms-spec §5.2).
const (
	// SourceHTTP is a plain GET of an http or https URL.
	SourceHTTP SourceKind = iota + 1
	// SourceArtifactory is a GET of an http or https URL that carries the
	// request's access token in X-JFrog-Art-Api (LocationType artifactory
	// or jfrog).
	SourceArtifactory
	// SourceFile is a copy of a local file, which must lie inside
	// firmware_dir; a relative path is taken relative to it.
	SourceFile
)

func (k SourceKind) String() string {
	switch k {
	case SourceHTTP:
		return "http"
	case SourceArtifactory:
		return "artifactory"
	case SourceFile:
		return "file"
	}
	return "unknown"
}

// Source is where an artifact comes from.
type Source struct {
	Kind SourceKind
	// URL is the http or https URL (SourceHTTP, SourceArtifactory).
	URL string
	// Path is the local path (SourceFile).
	Path string
}

// String names the source for logs and errors: the URL without its query
// and fragment (which may hold signatures), or the local path.
func (s Source) String() string {
	if s.Kind == SourceFile {
		return s.Path
	}
	return redactURL(s.URL)
}

// redactURL drops a URL's credentials, query and fragment.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}

// Artifact is one downloadable payload of a manifest.
type Artifact struct {
	// Name is the cache file name, derived from the Location: one path
	// element of letters, digits, '.', '_', '+' and '-', not starting with '.'.
	Name   string
	Source Source
	// Sha256 is the expected digest, lower-case hex.
	Sha256 string
	// Component is the raw label of the first entry that referenced it.
	Component string
}

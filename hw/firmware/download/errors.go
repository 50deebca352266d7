package download

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinels; every failure of an artifact wraps one of them, or a context
// error when the caller cancelled.
var (
	// ErrChecksum: the bytes do not have the manifest's Sha256.
	ErrChecksum = errors.New("download: sha256 mismatch")
	// ErrNoChecksum: the artifact names no valid Sha256 to verify against.
	ErrNoChecksum = errors.New("download: no sha256 to verify against")
	// ErrTooLarge: the artifact is larger than Options.MaxArtifactBytes.
	ErrTooLarge = errors.New("download: artifact exceeds the size limit")
	// ErrStalled: no data arrived for Options.StallTimeout.
	ErrStalled = errors.New("download: transfer stalled")
	// ErrTooSlow: fewer bytes arrived over Options.RateWindow than
	// Options.MinBytesPerSecond asks (a *RateError).
	ErrTooSlow = errors.New("download: transfer too slow")
	// ErrHTTP: the server answered something other than 200.
	ErrHTTP = errors.New("download: HTTP error")
	// ErrUnauthorized: the server answered 401 or 403 (also ErrHTTP).
	ErrUnauthorized = errors.New("download: unauthorized")
	// ErrNotFound: the server answered 404 (also ErrHTTP).
	ErrNotFound = errors.New("download: not found")
	// ErrTransport: connection refused, reset, TLS failure, timeout...
	ErrTransport = errors.New("download: transport error")
	// ErrRedirect: a redirect to a scheme other than http or https, or too many.
	ErrRedirect = errors.New("download: redirect refused")
	// ErrInsecureToken: an access token would go over plain http, and
	// Options.AllowInsecureToken is not set.
	ErrInsecureToken = errors.New("download: access token refused over plain http")
	// ErrUnsupportedSource: the artifact's source kind cannot be fetched
	// (a file source without Options.SourceRoot, an unknown kind).
	ErrUnsupportedSource = errors.New("download: unsupported source")
)

// StatusError is a non-200 answer. It matches ErrHTTP, and ErrUnauthorized
// (401, 403) or ErrNotFound (404).
type StatusError struct {
	Status int
	// URL is the URL asked, without its query.
	URL string
	// TokenSent reports whether an access token went with the request.
	TokenSent bool
}

// Error reads e.g. "GET https://host/p.fwpkg returned HTTP 401 (no access token was sent)".
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("GET %s returned HTTP %d", e.URL, e.Status)
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		if e.TokenSent {
			msg += " (an access token was sent)"
		} else {
			msg += " (no access token was sent)"
		}
	}
	return msg
}

// Is maps the status to the sentinels.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrHTTP:
		return true
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

// ChecksumError is a digest mismatch; it matches ErrChecksum.
type ChecksumError struct {
	Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("sha256 mismatch: got %s, want %s", e.Got, e.Want)
}

// Is matches ErrChecksum.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }

// ArtifactError is the failure of one artifact.
type ArtifactError struct {
	// Name is the artifact's cache file name.
	Name string
	// Source is where it came from, without a URL's query.
	Source string
	Err    error
}

func (e *ArtifactError) Error() string {
	return fmt.Sprintf("artifact %s from %s: %v", e.Name, e.Source, e.Err)
}

func (e *ArtifactError) Unwrap() error { return e.Err }

// maxShown is how many failures an Error spells out before counting the rest.
const maxShown = 10

// Error lists the artifacts of one Download that failed; errors.Is and
// errors.As see each of them.
type Error struct {
	Failed []*ArtifactError
	Total  int
}

// Error reads "download: 2 of 7 artifacts failed: artifact a from ...; artifact b from ...".
func (e *Error) Error() string {
	var parts []string
	for i, f := range e.Failed {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Failed)-maxShown))
			break
		}
		parts = append(parts, f.Error())
	}
	return fmt.Sprintf("download: %d of %d artifacts failed: %s", len(e.Failed), e.Total, strings.Join(parts, "; "))
}

// Unwrap returns every artifact's failure.
func (e *Error) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f
	}
	return out
}

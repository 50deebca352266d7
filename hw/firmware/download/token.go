package download

import (
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// NoAuth is the access_token callers send to mean "no artifact
// credentials" (NICo always sends a token, this one when it has none).
const NoAuth = "NOAUTH"

// TokenHeader carries the access token to artifactory and jfrog sources.
const TokenHeader = "X-JFrog-Art-Api"

// AccessToken reads a request's access_token: empty, white space only and
// NOAUTH mean no token; anything else is kept byte for byte.
func AccessToken(raw string) hw.Secret {
	if t := strings.TrimSpace(raw); t == "" || t == NoAuth {
		return hw.Secret{}
	}
	return hw.NewSecret(raw)
}

package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/callerid"
)

// errAuthzNeedsMTLS refuses [authz] roles on a plaintext listener: no
// caller would carry a verified certificate, so every RPC would be denied.
var errAuthzNeedsMTLS = errors.New("[authz] defines roles, but the gRPC listener is not mTLS ([tls] cert, key and ca): every caller would be denied; configure mTLS or remove the roles")

// authorizer compiles [authz] for the gRPC server: nil (allow everything)
// without roles. mtls tells whether callers present verified certificates.
func authorizer(cfg config.Authz, mtls bool, log logging.Logger) (*authz.Policy, error) {
	policy, err := authz.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if policy == nil {
		return nil, nil
	}
	if !mtls {
		return nil, errAuthzNeedsMTLS
	}
	log.Info().Int("roles", len(cfg.Roles)).Int("bindings", len(cfg.Bindings)).
		Msg("authorization on: RPCs need a permission a role bound to the client certificate grants")
	return policy, nil
}

// consoleAuthorizer is the web console's check under policy: every page
// shows the whole site, so it needs the read permission of a role without
// rack limits, granted to the browser's verified client certificate (the
// console's own port, which has the gRPC API's mTLS; the metrics listener
// asks for no certificate, so there every request is refused). A nil
// policy allows everyone who reached the listener.
func consoleAuthorizer(policy *authz.Policy) func(r *http.Request) error {
	if policy == nil {
		return nil
	}
	siteWide := func() (authz.Scope, error) { return authz.Scope{SiteWide: true}, nil }
	return func(r *http.Request) error {
		return policy.Authorize(callerid.FromTLS(r.TLS, r.RemoteAddr), authz.Read, siteWide)
	}
}

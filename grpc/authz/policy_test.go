package authz_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/callerid"
)

func policy(t *testing.T, cfg config.Authz) *authz.Policy {
	t.Helper()
	p, err := authz.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func racks(r ...string) func() (authz.Scope, error) {
	return func() (authz.Scope, error) { return authz.Scope{Racks: r}, nil }
}

func siteWide() (authz.Scope, error) { return authz.Scope{SiteWide: true}, nil }

func cert(cn string, ou []string, dns []string, uris []string) callerid.Identity {
	return callerid.Identity{Verified: true, Subject: "CN=" + cn, CommonName: cn, OrganizationalUnit: ou,
		DNSNames: dns, URIs: uris, Addr: "127.0.0.1:40000"}
}

var sample = config.Authz{
	Roles: map[string]config.AuthzRole{
		"operator": {Permissions: []string{"read", "power"}},
		"rack-a":   {Permissions: []string{"read", "power", "firmware"}, Racks: []string{"rack-a-*", "lab"}},
		"admin":    {Permissions: config.AuthzGroups},
	},
	Bindings: []config.AuthzBinding{
		{Roles: []string{"operator"}, CN: "ops-*"},
		{Roles: []string{"rack-a"}, OU: "team-a"},
		{Roles: []string{"admin"}, URI: "spiffe://example.org/bmm/*", DNS: "bmm.example.org"},
	},
}

func TestNoRolesAllowsEverything(t *testing.T) {
	p := policy(t, config.Authz{})
	if p != nil {
		t.Fatal("a configuration without roles must give no policy")
	}
	if err := p.Authorize(callerid.Identity{}, authz.Destructive, siteWide); err != nil {
		t.Fatalf("nil policy refused: %v", err)
	}
}

func TestGroupsByBinding(t *testing.T) {
	p := policy(t, sample)
	ops := cert("ops-alice", nil, nil, nil)
	if err := p.Authorize(ops, authz.Power, siteWide); err != nil {
		t.Fatalf("operator refused power: %v", err)
	}
	err := p.Authorize(ops, authz.Firmware, siteWide)
	var d *authz.Denied
	if !errors.As(err, &d) || d.Group != authz.Firmware {
		t.Fatalf("operator allowed firmware: %v", err)
	}
	if st := status.Convert(err); st.Code() != codes.PermissionDenied ||
		st.Message() != `permission "firmware" is not granted to CN=ops-alice` {
		t.Fatalf("status %v", st)
	}
	// A CN glob does not match a prefix without the glob's shape.
	if err := p.Authorize(cert("opsalice", nil, nil, nil), authz.Read, siteWide); err == nil {
		t.Fatal("CN opsalice matched ops-*")
	}
}

func TestEveryMatcherOfABindingMustMatch(t *testing.T) {
	p := policy(t, sample)
	both := cert("x", nil, []string{"bmm.example.org"}, []string{"spiffe://example.org/bmm/prod"})
	if err := p.Authorize(both, authz.Destructive, siteWide); err != nil {
		t.Fatalf("URI and DNS match, refused: %v", err)
	}
	uriOnly := cert("x", nil, []string{"other.example.org"}, []string{"spiffe://example.org/bmm/prod"})
	if err := p.Authorize(uriOnly, authz.Read, siteWide); err == nil {
		t.Fatal("binding matched on URI alone although its DNS pattern does not match")
	}
	// path.Match: * stops at a slash.
	deeper := cert("x", nil, []string{"bmm.example.org"}, []string{"spiffe://example.org/bmm/prod/extra"})
	if err := p.Authorize(deeper, authz.Read, siteWide); err == nil {
		t.Fatal("* matched across a slash")
	}
}

func TestUnverifiedCallerHasNoRoles(t *testing.T) {
	p := policy(t, config.Authz{
		Roles:    map[string]config.AuthzRole{"all": {Permissions: []string{"read"}}},
		Bindings: []config.AuthzBinding{{Roles: []string{"all"}, CN: "*"}},
	})
	err := p.Authorize(callerid.Identity{Addr: "10.0.0.9:5000"}, authz.Read, siteWide)
	if err == nil {
		t.Fatal("an unverified caller was allowed")
	}
	if want := `permission "read" is not granted to peer 10.0.0.9:5000 (no verified client certificate)`; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	if got := p.Roles(cert("anyone", nil, nil, nil)); strings.Join(got, ",") != "all" {
		t.Fatalf("CN * roles = %v", got)
	}
}

func TestRackLimitedRole(t *testing.T) {
	p := policy(t, sample)
	teamA := cert("bob", []string{"infra", "team-a"}, nil, nil)
	if err := p.Authorize(teamA, authz.Firmware, racks("rack-a-01", "lab")); err != nil {
		t.Fatalf("own racks refused: %v", err)
	}
	err := p.Authorize(teamA, authz.Firmware, racks("rack-a-01", "rack-b-01"))
	if err == nil || err.Error() != `permission "firmware" on rack "rack-b-01" is not granted to CN=bob` {
		t.Fatalf("another rack: %v", err)
	}
	err = p.Authorize(teamA, authz.Read, siteWide)
	if err == nil || !strings.Contains(err.Error(), `permission "read" on all racks`) {
		t.Fatalf("site-wide: %v", err)
	}
	if err := p.Authorize(teamA, authz.Read, racks()); err == nil {
		t.Fatal("a request naming no rack passed a rack-limited role")
	}
	// An unlimited role with the group makes the scope irrelevant: it is
	// not even computed.
	opsTeamA := cert("ops-bob", []string{"team-a"}, nil, nil)
	if err := p.Authorize(opsTeamA, authz.Power, func() (authz.Scope, error) {
		return authz.Scope{}, errors.New("scope computed")
	}); err != nil {
		t.Fatalf("unlimited power refused: %v", err)
	}
	// Firmware only comes from the rack-limited role.
	if err := p.Authorize(opsTeamA, authz.Firmware, racks("rack-c")); err == nil {
		t.Fatal("firmware on rack-c allowed")
	}
}

func TestNewRefusesWhatConfigRefuses(t *testing.T) {
	for name, cfg := range map[string]config.Authz{
		"unknown group": {Roles: map[string]config.AuthzRole{"r": {Permissions: []string{"reboot"}}}},
		"no permission": {Roles: map[string]config.AuthzRole{"r": {}}},
		"bad rack":      {Roles: map[string]config.AuthzRole{"r": {Permissions: []string{"read"}, Racks: []string{"["}}}},
		"unknown role": {Roles: map[string]config.AuthzRole{"r": {Permissions: []string{"read"}}},
			Bindings: []config.AuthzBinding{{Roles: []string{"x"}, CN: "a"}}},
		"bad glob": {Roles: map[string]config.AuthzRole{"r": {Permissions: []string{"read"}}},
			Bindings: []config.AuthzBinding{{Roles: []string{"r"}, URI: "a["}}},
		"no matcher": {Roles: map[string]config.AuthzRole{"r": {Permissions: []string{"read"}}},
			Bindings: []config.AuthzBinding{{Roles: []string{"r"}}}},
		"orphan bindings": {Bindings: []config.AuthzBinding{{Roles: []string{"r"}, CN: "a"}}},
	} {
		if _, err := authz.New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

package config

import (
	"strings"
	"testing"
)

// TestAuthzParses: roles as tables, bindings as an array of tables, all
// four matchers.
func TestAuthzParses(t *testing.T) {
	cfg, err := Load(Source{Path: writeConfig(t, `
[authz.roles.operator]
permissions = ["read", "power"]
racks = ["rack-a*", "r1"]

[authz.roles.admin]
permissions = ["read", "power", "firmware", "switch-admin", "fabric", "destructive", "admin"]

[[authz.bindings]]
roles = ["operator"]
cn = "ops-*"
ou = "sre"

[[authz.bindings]]
roles = ["admin", "operator"]
uri = "spiffe://example.org/bmm/*"
dns = "bmm.example.org"
`), Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Authz
	if !a.Enabled() {
		t.Fatal("roles defined, authz must be on")
	}
	op := a.Roles["operator"]
	if strings.Join(op.Permissions, ",") != "read,power" || strings.Join(op.Racks, ",") != "rack-a*,r1" {
		t.Fatalf("operator = %+v", op)
	}
	if len(a.Roles["admin"].Permissions) != len(AuthzGroups) {
		t.Fatalf("admin = %+v", a.Roles["admin"])
	}
	if len(a.Bindings) != 2 {
		t.Fatalf("bindings = %+v", a.Bindings)
	}
	b0, b1 := a.Bindings[0], a.Bindings[1]
	if b0.CN != "ops-*" || b0.OU != "sre" || strings.Join(b0.Roles, ",") != "operator" {
		t.Fatalf("binding 0 = %+v", b0)
	}
	if b1.URI != "spiffe://example.org/bmm/*" || b1.DNS != "bmm.example.org" || strings.Join(b1.Roles, ",") != "admin,operator" {
		t.Fatalf("binding 1 = %+v", b1)
	}
}

// TestAuthzOffByDefault: no [authz] (or one without roles) leaves
// authorization off.
func TestAuthzOffByDefault(t *testing.T) {
	cfg, err := Load(Source{Path: writeConfig(t, "port = 9000\n"), Explicit: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Authz.Enabled() {
		t.Fatal("authz on without roles")
	}
}

// TestAuthzInvalid: each mistake refuses the configuration, naming the
// key and the problem.
func TestAuthzInvalid(t *testing.T) {
	for _, tt := range []struct {
		name, give string
		want       []string
	}{
		{"unknown group", `
[authz.roles.op]
permissions = ["read", "reboot"]
`, []string{`authz.roles.op.permissions: unknown group "reboot"`, "known: read, power, firmware, switch-admin, fabric, destructive, admin"}},
		{"role without permissions", `
[authz.roles.op]
racks = ["r1"]
`, []string{"authz.roles.op.permissions: a role must grant at least one group"}},
		{"bad rack glob", `
[authz.roles.op]
permissions = ["read"]
racks = ["rack-[a"]
`, []string{`authz.roles.op.racks: "rack-[a" is not a valid glob`}},
		{"bad binding glob", `
[authz.roles.op]
permissions = ["read"]
[[authz.bindings]]
roles = ["op"]
cn = "ops-[x"
`, []string{`authz.bindings[0].cn: "ops-[x" is not a valid glob`}},
		{"unknown role", `
[authz.roles.op]
permissions = ["read"]
[[authz.bindings]]
roles = ["operator"]
cn = "ops"
`, []string{`authz.bindings[0].roles: unknown role "operator"`}},
		{"binding matching nothing", `
[authz.roles.op]
permissions = ["read"]
[[authz.bindings]]
roles = ["op"]
`, []string{"authz.bindings[0]: needs at least one of cn, ou, dns, uri"}},
		{"binding without roles", `
[authz.roles.op]
permissions = ["read"]
[[authz.bindings]]
cn = "ops"
`, []string{"authz.bindings[0].roles: a binding must grant at least one role"}},
		{"bindings without roles defined", `
[[authz.bindings]]
roles = ["op"]
cn = "ops"
`, []string{"authz.bindings: bind to roles, but [authz.roles] defines none"}},
		{"unknown key", `
[authz.roles.op]
permissions = ["read"]
rack = ["r1"]
[[authz.bindings]]
roles = ["op"]
subject = "CN=x"
`, []string{`unknown key "authz.roles.op.rack"`, `unknown key "authz.bindings[0].subject"`}},
		{"wrong types", `
[authz]
bindings = "cn=x"
[authz.roles.op]
permissions = "read"
`, []string{"authz.bindings: expected an array of tables", "authz.roles.op.permissions: expected an array of strings"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Source{Path: writeConfig(t, tt.give), Explicit: true})
			if err == nil {
				t.Fatal("the configuration was accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// AuthzGroups are the permission groups a role may grant, in the order the
// documentation lists them. Package grpc/authz maps every RPC to one of
// them.
var AuthzGroups = []string{"read", "power", "firmware", "switch-admin", "fabric", "destructive", "admin"}

// AuthzRole is one [authz.roles.<name>] table.
type AuthzRole struct {
	// Permissions are the groups the role grants (AuthzGroups).
	Permissions []string
	// Racks limits the role to these rack ids or path.Match globs; empty,
	// the role holds on every rack and on site-wide requests.
	Racks []string
}

// AuthzBinding is one [[authz.bindings]] entry: the roles granted to a
// client certificate every given matcher matches (at least one is given).
type AuthzBinding struct {
	// Roles are the role names granted.
	Roles []string
	// CN matches the subject's common name.
	CN string
	// OU matches any of the subject's organizational units.
	OU string
	// DNS matches any DNS subject alternative name.
	DNS string
	// URI matches any URI subject alternative name.
	URI string
}

// Enabled reports whether authorization is on: [authz] defines a role.
func (a Authz) Enabled() bool { return len(a.Roles) > 0 }

// decodeRoles decodes [authz.roles]: one table per role with permissions
// and racks, both arrays of strings.
func (d *decoder) decodeRoles(where string, raw map[string]any) map[string]AuthzRole {
	out := map[string]AuthzRole{}
	for _, name := range sortedKeys(raw) {
		at := d.where(join(where, name))
		table, ok := raw[name].(map[string]any)
		if !ok {
			d.addf("%s: expected a table with permissions and racks, got %s", at, describe(raw[name]))
			continue
		}
		var r AuthzRole
		for _, key := range sortedKeys(table) {
			switch key {
			case "permissions":
				r.Permissions = d.stringList(at+".permissions", table[key])
			case "racks":
				r.Racks = d.stringList(at+".racks", table[key])
			default:
				d.addf("unknown key %q (known: permissions, racks)", at+"."+key)
			}
		}
		out[name] = r
	}
	return out
}

// decodeBindings decodes [[authz.bindings]], an array of tables.
func (d *decoder) decodeBindings(where string, val any) []AuthzBinding {
	list, ok := val.([]any)
	if !ok {
		d.addf("%s: expected an array of tables ([[authz.bindings]]), got %s", d.where(where), describe(val))
		return nil
	}
	out := make([]AuthzBinding, 0, len(list))
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", where, i)
		table, ok := item.(map[string]any)
		if !ok {
			d.addf("%s: expected a table, got %s", at, describe(item))
			continue
		}
		var b AuthzBinding
		for _, key := range sortedKeys(table) {
			var field *string
			switch key {
			case "roles":
				b.Roles = d.stringList(at+".roles", table[key])
				continue
			case "cn":
				field = &b.CN
			case "ou":
				field = &b.OU
			case "dns":
				field = &b.DNS
			case "uri":
				field = &b.URI
			default:
				d.addf("unknown key %q (known: roles, cn, ou, dns, uri)", at+"."+key)
				continue
			}
			s, ok := table[key].(string)
			if !ok {
				d.addf("%s.%s: expected a string, got %s", at, key, describe(table[key]))
				continue
			}
			*field = s
		}
		out = append(out, b)
	}
	return out
}

// stringList decodes an array of strings.
func (d *decoder) stringList(where string, val any) []string {
	list, ok := val.([]any)
	if !ok {
		d.addf("%s: expected an array of strings, got %s", where, describe(val))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			d.addf("%s: expected an array of strings, found %s", where, describe(item))
			continue
		}
		out = append(out, s)
	}
	return out
}

// problems validates [authz]: known groups, a role grants something, globs
// that parse, bindings that match something and name defined roles.
func (a Authz) problems() []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if !a.Enabled() {
		if len(a.Bindings) > 0 {
			add("authz.bindings: bind to roles, but [authz.roles] defines none")
		}
		return p
	}
	for _, name := range sortedRoleNames(a.Roles) {
		r := a.Roles[name]
		at := "authz.roles." + name
		if strings.TrimSpace(name) == "" {
			add("authz.roles: a role name is empty")
		}
		if len(r.Permissions) == 0 {
			add("%s.permissions: a role must grant at least one group (%s)", at, strings.Join(AuthzGroups, ", "))
		}
		for _, g := range r.Permissions {
			if !slices.Contains(AuthzGroups, g) {
				add("%s.permissions: unknown group %q (known: %s)", at, g, strings.Join(AuthzGroups, ", "))
			}
		}
		for _, rack := range r.Racks {
			if msg := globProblem(rack); msg != "" {
				add("%s.racks: %q %s", at, rack, msg)
			}
		}
	}
	for i, b := range a.Bindings {
		at := fmt.Sprintf("authz.bindings[%d]", i)
		if len(b.Roles) == 0 {
			add("%s.roles: a binding must grant at least one role", at)
		}
		for _, r := range b.Roles {
			if _, ok := a.Roles[r]; !ok {
				add("%s.roles: unknown role %q", at, r)
			}
		}
		if b.CN == "" && b.OU == "" && b.DNS == "" && b.URI == "" {
			add("%s: needs at least one of cn, ou, dns, uri to match a client certificate", at)
		}
		for _, m := range []struct{ key, pattern string }{{"cn", b.CN}, {"ou", b.OU}, {"dns", b.DNS}, {"uri", b.URI}} {
			if m.pattern == "" {
				continue
			}
			if msg := globProblem(m.pattern); msg != "" {
				add("%s.%s: %q %s", at, m.key, m.pattern, msg)
			}
		}
	}
	return p
}

// globProblem explains why pattern is no usable path.Match pattern, or "".
func globProblem(pattern string) string {
	if strings.TrimSpace(pattern) == "" {
		return "is empty"
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return "is not a valid glob (path.Match syntax: *, ?, [a-z], \\ escapes)"
	}
	return ""
}

func sortedRoleNames(roles map[string]AuthzRole) []string {
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

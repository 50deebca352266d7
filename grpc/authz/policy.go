package authz

import (
	"fmt"
	"path"
	"slices"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/callerid"
)

// Policy is a compiled [authz] section. A nil *Policy allows everything
// (no [authz] roles, as upstream).
type Policy struct {
	roles    map[string]*role
	bindings []binding
}

// role is one role: its groups and, when limited, its rack patterns.
type role struct {
	name   string
	groups map[Group]bool
	racks  []string // empty: every rack and site-wide requests
}

// binding grants roles to the identities all its non-empty patterns match.
type binding struct {
	roles            []*role
	cn, ou, dns, uri string
}

// New compiles cfg; nil (allow everything) when it defines no role. It
// checks what config.Authz's validation checks, so a Policy is never built
// from a configuration the daemon would refuse.
func New(cfg config.Authz) (*Policy, error) {
	if !cfg.Enabled() {
		if len(cfg.Bindings) > 0 {
			return nil, fmt.Errorf("authz: bindings name roles, but no role is defined")
		}
		return nil, nil
	}
	p := &Policy{roles: map[string]*role{}}
	for name, rc := range cfg.Roles {
		r := &role{name: name, groups: map[Group]bool{}}
		if len(rc.Permissions) == 0 {
			return nil, fmt.Errorf("authz: role %q grants no permission", name)
		}
		for _, g := range rc.Permissions {
			if !slices.Contains(Groups, Group(g)) {
				return nil, fmt.Errorf("authz: role %q: unknown permission group %q", name, g)
			}
			r.groups[Group(g)] = true
		}
		for _, rack := range rc.Racks {
			if err := checkGlob(rack); err != nil {
				return nil, fmt.Errorf("authz: role %q: rack %q: %w", name, rack, err)
			}
		}
		r.racks = slices.Clone(rc.Racks)
		p.roles[name] = r
	}
	for i, bc := range cfg.Bindings {
		b := binding{cn: bc.CN, ou: bc.OU, dns: bc.DNS, uri: bc.URI}
		if b.cn == "" && b.ou == "" && b.dns == "" && b.uri == "" {
			return nil, fmt.Errorf("authz: binding %d matches no certificate field", i)
		}
		for _, pattern := range []string{b.cn, b.ou, b.dns, b.uri} {
			if pattern == "" {
				continue
			}
			if err := checkGlob(pattern); err != nil {
				return nil, fmt.Errorf("authz: binding %d: %q: %w", i, pattern, err)
			}
		}
		if len(bc.Roles) == 0 {
			return nil, fmt.Errorf("authz: binding %d grants no role", i)
		}
		for _, name := range bc.Roles {
			r, ok := p.roles[name]
			if !ok {
				return nil, fmt.Errorf("authz: binding %d: unknown role %q", i, name)
			}
			b.roles = append(b.roles, r)
		}
		p.bindings = append(p.bindings, b)
	}
	return p, nil
}

func checkGlob(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("empty pattern")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("not a path.Match pattern: %w", err)
	}
	return nil
}

// match reports whether pattern (exact or a path.Match glob) matches s.
// Patterns were checked when the policy was built.
func match(pattern, s string) bool {
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

func matchAny(pattern string, values []string) bool {
	for _, v := range values {
		if match(pattern, v) {
			return true
		}
	}
	return false
}

// matches reports whether the binding applies to id: every pattern it
// gives matches. An unverified caller matches nothing.
func (b binding) matches(id callerid.Identity) bool {
	if !id.Verified {
		return false
	}
	return (b.cn == "" || match(b.cn, id.CommonName)) &&
		(b.ou == "" || matchAny(b.ou, id.OrganizationalUnit)) &&
		(b.dns == "" || matchAny(b.dns, id.DNSNames)) &&
		(b.uri == "" || matchAny(b.uri, id.URIs))
}

// Roles are the names of the roles bound to id, sorted.
func (p *Policy) Roles(id callerid.Identity) []string {
	var names []string
	for _, r := range p.granting(id, "") {
		names = append(names, r.name)
	}
	slices.Sort(names)
	return names
}

// granting lists the roles bound to id that grant g (any group when g is
// empty), each once.
func (p *Policy) granting(id callerid.Identity, g Group) []*role {
	var out []*role
	for _, b := range p.bindings {
		if !b.matches(id) {
			continue
		}
		for _, r := range b.roles {
			if (g == "" || r.groups[g]) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// covers reports whether the role holds on rack.
func (r *role) covers(rack string) bool {
	if len(r.racks) == 0 {
		return true
	}
	for _, pattern := range r.racks {
		if match(pattern, rack) {
			return true
		}
	}
	return false
}

// Scope is what a request reaches: the racks it names and whether it also
// reaches beyond any one rack (it names no rack, or a node rmsd cannot
// place in a rack).
type Scope struct {
	Racks    []string
	SiteWide bool
}

// Authorize allows id to call an RPC of group g whose scope the scope
// function tells (called only when a rack-limited role is all that could
// allow it), or returns a *Denied error. A nil Policy allows everything.
func (p *Policy) Authorize(id callerid.Identity, g Group, scope func() (Scope, error)) error {
	if p == nil {
		return nil
	}
	roles := p.granting(id, g)
	if len(roles) == 0 {
		return &Denied{Caller: id, Group: g}
	}
	for _, r := range roles {
		if len(r.racks) == 0 {
			return nil
		}
	}
	s, err := scope()
	if err != nil {
		return err
	}
	if s.SiteWide || len(s.Racks) == 0 {
		return &Denied{Caller: id, Group: g, SiteWide: true}
	}
	for _, rack := range s.Racks {
		if !slices.ContainsFunc(roles, func(r *role) bool { return r.covers(rack) }) {
			return &Denied{Caller: id, Group: g, Rack: rack}
		}
	}
	return nil
}

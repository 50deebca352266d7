package rmsserver

import (
	"context"
	"errors"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/messages"
)

// maxScopeDepth bounds how deep requestScope looks into nested messages
// (NodeSet.nodes[].rack_id is depth 2).
const maxScopeDepth = 4

// requestScope is what a request reaches, for a rack-limited role: the
// racks it names (rack_id and rack_ids fields, its own or of the nodes it
// lists), the racks the registry places the nodes named without a rack in,
// and, for a job status poll (a job_id request), the racks of the job and
// its children, which the job engine tells. A request that names no rack,
// a node the registry cannot place or a job that is unknown or holds no
// rack reaches beyond named racks: it is site-wide.
func requestScope(ctx context.Context, deps Deps, req any) (authz.Scope, error) {
	pm, ok := req.(proto.Message)
	if !ok {
		return authz.Scope{SiteWide: true}, nil
	}
	var c scopeCollector
	c.walk(pm.ProtoReflect(), 0)
	if c.jobID != "" {
		return jobScope(ctx, deps, c.jobID)
	}
	if len(c.unplaced) > 0 {
		c.place(deps)
	}
	slices.Sort(c.racks)
	return authz.Scope{Racks: slices.Compact(c.racks), SiteWide: c.siteWide || len(c.racks) == 0}, nil
}

// scopeCollector gathers the rack and node ids of one request.
type scopeCollector struct {
	racks    []string
	unplaced []string // node ids named without a rack id
	jobID    string
	siteWide bool
}

// walk collects from m, at depth below the request. It is only called on
// messages that can name a rack (namesRacks); one nested deeper than
// maxScopeDepth is not read, and makes the request site-wide.
func (c *scopeCollector) walk(m protoreflect.Message, depth int) {
	if !m.IsValid() {
		return
	}
	if depth > maxScopeDepth {
		c.siteWide = true
		return
	}
	fields := m.Descriptor().Fields()
	rack := rpcfields.StringField(m, "rack_id")
	if rack != "" {
		c.racks = append(c.racks, rack)
	} else if node := rpcfields.StringField(m, "node_id"); node != "" {
		c.unplaced = append(c.unplaced, node)
	}
	if depth == 0 {
		if f := fields.ByName("job_id"); f != nil && f.Kind() == protoreflect.StringKind && !f.IsList() {
			c.jobID = m.Get(f).String()
			if c.jobID == "" {
				c.siteWide = true
			}
		}
	}
	if f := fields.ByName("rack_ids"); f != nil && f.IsList() && f.Kind() == protoreflect.StringKind {
		list := m.Get(f).List()
		for i := range list.Len() {
			c.racks = append(c.racks, list.Get(i).String())
		}
	}
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.Message() == nil || f.IsMap() || !namesRacks(f.Message()) || !m.Has(f) {
			continue
		}
		if f.IsList() {
			list := m.Get(f).List()
			for j := range list.Len() {
				c.walk(list.Get(j).Message(), depth+1)
			}
			continue
		}
		c.walk(m.Get(f).Message(), depth+1)
	}
}

// place resolves the racks of the nodes named without one through the
// node registry; a node it does not hold makes the request site-wide.
func (c *scopeCollector) place(deps Deps) {
	if deps.Racks == nil {
		c.siteWide = true
		return
	}
	byID := deps.Racks.RacksOf(c.unplaced)
	for _, id := range c.unplaced {
		racks, ok := byID[id]
		if !ok {
			c.siteWide = true
			continue
		}
		c.racks = append(c.racks, racks...)
	}
}

// jobScope is the racks of a job and its children.
func jobScope(ctx context.Context, deps Deps, id string) (authz.Scope, error) {
	if deps.Jobs == nil {
		return authz.Scope{}, errJobsUnavailable
	}
	jobs, err := deps.Jobs.Get(ctx, id, true)
	if errors.Is(err, messages.ErrJobNotFound) {
		return authz.Scope{SiteWide: true}, nil
	}
	if err != nil {
		return authz.Scope{}, engineError(err)
	}
	var s authz.Scope
	for _, j := range jobs {
		if j.RackID != "" {
			s.Racks = append(s.Racks, j.RackID)
		}
	}
	slices.Sort(s.Racks)
	s.Racks = slices.Compact(s.Racks)
	s.SiteWide = len(s.Racks) == 0
	return s, nil
}

// rackNaming memoizes namesRacks by message name.
var rackNaming sync.Map // protoreflect.FullName -> bool

// namesRacks reports whether messages of md can hold a rack_id, rack_ids
// or node_id field, themselves or in the messages they nest (not through
// maps): walk skips the others (endpoints, credentials, filters).
func namesRacks(md protoreflect.MessageDescriptor) bool {
	if v, ok := rackNaming.Load(md.FullName()); ok {
		return v.(bool)
	}
	found := searchRacks(md, map[protoreflect.FullName]bool{}, 0)
	rackNaming.Store(md.FullName(), found)
	return found
}

func searchRacks(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool, depth int) bool {
	if seen[md.FullName()] || depth > maxScopeDepth {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for _, name := range []protoreflect.Name{"rack_id", "rack_ids", "node_id"} {
		if f := fields.ByName(name); f != nil && f.Kind() == protoreflect.StringKind {
			return true
		}
	}
	for i := range fields.Len() {
		if f := fields.Get(i); f.Message() != nil && !f.IsMap() && searchRacks(f.Message(), seen, depth+1) {
			return true
		}
	}
	return false
}

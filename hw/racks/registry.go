package racks

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"

	"github.com/rmsd/rmsd/hw"
)

// Registry holds the registered racks. The zero value is not usable; call New.
type Registry struct {
	profiles map[string]bool

	// resolver canonicalises endpoint host names (hw.CanonicalAddr).
	resolver hw.Resolver

	mu       sync.RWMutex
	racks    map[string]*rack
	observer Observer
	// devices maps each registered device key (hw.Node.DeviceKeys) to
	// the node registered with it; keys lists each node's.
	devices map[string]hw.Ref
	keys    map[hw.Ref][]string
	// pending are the changes being written through the observer, reserved
	// maps the device keys they take to their nodes, and newRacks the
	// racks they would register (pending.go).
	pending  map[hw.Ref]*change
	reserved map[string]hw.Ref
	newRacks map[string]*pendingRack
}

// Observer is told of every change of a node before the registry makes it:
// the node as it is to be registered, or nil when it is to be deleted. It
// runs without the registry's lock (look-ups go on meanwhile, and see the
// change only once it is made), possibly for several nodes at once, but
// never for two changes of one node at once: the changes of a node reach
// it in the order they are made. It must not change the registry. When it
// returns an error (it could not persist the change) the change is not
// made and the call that asked for it fails with ErrUnavailable.
type Observer func(ref hw.Ref, n *hw.Node) error

// Observe sets the observer (nil: none).
func (r *Registry) Observe(o Observer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observer = o
}

// notify tells observe (the observer when the change was reserved) of a
// change about to be made, without the registry's lock; an error means
// the change must not be made. It returns the refusal and the observer's
// own error.
func notify(observe Observer, ref hw.Ref, n *hw.Node) (refusal, cause error) {
	if observe == nil {
		return nil, nil
	}
	if err := observe(ref, n); err != nil {
		return storeRefusal(ref, n, err), err
	}
	return nil, nil
}

// storeRefusal is the refusal of a change the store did not take.
func storeRefusal(ref hw.Ref, n *hw.Node, cause error) error {
	what := "registered"
	if n == nil {
		what = "deleted"
	}
	return refuse(ErrUnavailable, "node %s of rack %s not %s: %v", ref.NodeID, ref.RackID, what, cause)
}

type rack struct {
	family hw.ProductFamily
	nodes  map[string]hw.Node
}

// New returns an empty registry. profiles are the configured expected
// inventory profile names a node may select.
func New(profiles []string) *Registry {
	known := map[string]bool{}
	for _, p := range profiles {
		known[p] = true
	}
	return &Registry{profiles: known, racks: map[string]*rack{}, resolver: net.DefaultResolver,
		devices: map[string]hw.Ref{}, keys: map[hw.Ref][]string{},
		pending: map[hw.Ref]*change{}, reserved: map[string]hw.Ref{}, newRacks: map[string]*pendingRack{}}
}

// Create registers nodes. It returns one error per node, nil where the node
// was registered (or was already registered identically: Create is safe to
// repeat). A rack is created only if at least one of its nodes is accepted.
// The nodes are checked and reserved under the lock, written through the
// observer without it, then registered (pending.go). Once the observer has
// refused one node, the rest of the batch is refused at once with the same
// reason rather than waiting for the store again.
func (r *Registry) Create(nodes []hw.Node) []error {
	errs := make([]error, len(nodes))
	// Resolved before the lock: a look-up may take a while.
	keys := hw.DeviceKeysOf(context.Background(), r.resolver, nodes)
	changes, observe := r.reserveCreates(nodes, keys, errs)
	var cause error
	for i, c := range changes {
		switch {
		case c == nil:
		case cause != nil:
			errs[i] = refuse(ErrUnavailable, "node %s of rack %s not registered (not tried: an earlier node of this request was not stored): %v",
				c.ref.NodeID, c.ref.RackID, cause)
		default:
			errs[i], cause = notify(observe, c.ref, c.node)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range changes {
		if c != nil {
			r.settle(c, errs[i] == nil)
		}
	}
	return errs
}

// reserveCreates checks nodes under the lock, sets errs of those refused
// and reserves the others; it returns their changes (nil where there is
// nothing to write) and the observer to write them through.
func (r *Registry) reserveCreates(nodes []hw.Node, keys [][]string, errs []error) ([]*change, Observer) {
	changes := make([]*change, len(nodes))
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[hw.Ref]bool{}
	for i, n := range nodes {
		if err := r.validate(n); err != nil {
			errs[i] = err
			continue
		}
		if seen[n.Ref()] {
			errs[i] = refuse(ErrInvalidNode, "duplicate target rack_id/node_id: %s/%s", n.RackID, n.ID)
			continue
		}
		seen[n.Ref()] = true
		if family, ok := r.familyOf(n.RackID); ok && family != n.Type.Family() {
			errs[i] = refuse(ErrInvalidNode, "node %s is a %s node but rack %s is a %s rack",
				n.ID, n.Type.Family(), n.RackID, family)
			continue
		}
		if err := r.inProgress(n.Ref()); err != nil {
			errs[i] = err
			continue
		}
		if old, err := r.nodeLocked(n.RackID, n.ID); err == nil {
			if !sameNode(old, n) {
				errs[i] = refuse(ErrConflict, "node %s already exists in rack %s with other settings; use UpdateNode or DeleteNode first",
					n.ID, n.RackID)
			}
			continue
		}
		if err := r.deviceTaken(n.Ref(), keys[i]); err != nil {
			errs[i] = err
			continue
		}
		changes[i] = &change{ref: n.Ref(), node: &nodes[i], keys: keys[i], newRack: r.racks[n.RackID] == nil}
		r.reserve(changes[i])
	}
	return changes, r.observer
}

func (r *Registry) validate(n hw.Node) error {
	var problems []string
	if strings.TrimSpace(n.ID) == "" {
		problems = append(problems, "node_id is empty")
	}
	if strings.TrimSpace(n.RackID) == "" {
		problems = append(problems, "rack_id is empty")
	}
	if !n.Type.Valid() {
		problems = append(problems, "node type is not set")
	}
	if msg := endpointProblem("bmc_endpoint", n.BMC, true, true); msg != "" {
		problems = append(problems, msg)
	}
	if n.BMC != nil && !n.BMC.Credentials.Token.IsZero() {
		problems = append(problems, "bmc_endpoint has a session_token; BMCs take username/password credentials")
	}
	// Callers omit host credentials they do not have (users.md); the
	// switch operations that need them fail clearly when they run.
	if msg := endpointProblem("host_endpoint", n.Host, false, false); msg != "" {
		problems = append(problems, msg)
	}
	if n.HasInventoryProfile {
		switch p := strings.TrimSpace(n.InventoryProfile); {
		case p == "":
			problems = append(problems, "inventory_profile is empty")
		case !r.profiles[p]:
			problems = append(problems, fmt.Sprintf("inventory_profile %q is not configured", p))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return refuse(ErrInvalidNode, "%s", strings.Join(problems, "; "))
}

// endpointProblem checks an endpoint: it needs an address, a valid port and,
// when needCreds, credentials.
func endpointProblem(name string, ep *hw.Endpoint, required, needCreds bool) string {
	switch {
	case ep == nil && required:
		return name + " is required"
	case ep == nil:
		return ""
	case ep.Host() == "":
		return name + " has no ip_address or host_name"
	case ep.AddressProblem() != "":
		return name + " " + ep.AddressProblem()
	case ep.Port < 0 || ep.Port > 65535:
		return fmt.Sprintf("%s port %d is out of range", name, ep.Port)
	case needCreds && ep.Credentials.IsZero():
		return name + " has no credentials"
	}
	return ""
}

func sameNode(a, b hw.Node) bool {
	return a.Type == b.Type && sameEndpoint(a.BMC, b.BMC) && sameEndpoint(a.Host, b.Host) &&
		a.InventoryProfile == b.InventoryProfile && a.HasInventoryProfile == b.HasInventoryProfile
}

func sameEndpoint(a, b *hw.Endpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.IP == b.IP && a.MAC == b.MAC && a.HostName == b.HostName && a.Port == b.Port &&
		a.Credentials.Username == b.Credentials.Username &&
		a.Credentials.Password.Reveal() == b.Credentials.Password.Reveal() &&
		a.Credentials.Token.Reveal() == b.Credentials.Token.Reveal()
}

// Update replaces the BMC and/or host endpoint of a registered node; a nil
// endpoint is left as it is.
func (r *Registry) Update(rackID, nodeID string, bmc, host *hw.Endpoint) error {
	if bmc == nil && host == nil {
		return refuse(ErrInvalidNode, "update_info names neither bmc_endpoint nor host_endpoint")
	}
	ctx := context.Background()
	bmcKey, hostKey := hw.BMCKey(ctx, r.resolver, bmc), hw.HostKey(ctx, r.resolver, host)
	c, observe, err := r.reserveUpdate(rackID, nodeID, bmc, host, bmcKey, hostKey)
	if err != nil {
		return err
	}
	err, _ = notify(observe, c.ref, c.node)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(c, err == nil)
	return err
}

// reserveUpdate checks an update under the lock and reserves it.
func (r *Registry) reserveUpdate(rackID, nodeID string, bmc, host *hw.Endpoint, bmcKey, hostKey string) (*change, Observer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := r.nodeLocked(rackID, nodeID)
	if err != nil {
		return nil, nil, err
	}
	if err := r.inProgress(n.Ref()); err != nil {
		return nil, nil, err
	}
	if bmc != nil {
		n.BMC = bmc
	}
	if host != nil {
		n.Host = host
	}
	if err := r.validate(n); err != nil {
		return nil, nil, err
	}
	keys := r.updatedKeys(n.Ref(), bmc != nil, bmcKey, host != nil, hostKey)
	if err := r.deviceTaken(n.Ref(), keys); err != nil {
		return nil, nil, err
	}
	c := &change{ref: n.Ref(), node: &n, keys: keys}
	r.reserve(c)
	return c, r.observer, nil
}

// RestoreRack registers a rack without nodes, with its product family, as
// a restart finds it (a rack stays registered when its last node is
// deleted). A rack already registered is left as it is. The observer is
// not told: the rack comes from the store.
func (r *Registry) RestoreRack(rackID string, family hw.ProductFamily) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.racks[rackID]; !ok {
		r.racks[rackID] = &rack{family: family, nodes: map[string]hw.Node{}}
	}
}

// Delete removes a node. A rack left empty stays registered, with its
// product family (as upstream): a later node of another family is still
// refused. Whether a job holds the node is the job engine's to say; the
// caller asks it first.
func (r *Registry) Delete(rackID, nodeID string) error {
	ref := hw.Ref{RackID: rackID, NodeID: nodeID}
	c := &change{ref: ref}
	observe, err := func() (Observer, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, err := r.nodeLocked(rackID, nodeID); err != nil {
			return nil, err
		}
		if err := r.inProgress(ref); err != nil {
			return nil, err
		}
		r.reserve(c)
		return r.observer, nil
	}()
	if err != nil {
		return err
	}
	err, _ = notify(observe, ref, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(c, err == nil)
	return err
}

// Node returns a registered node.
func (r *Registry) Node(rackID, nodeID string) (hw.Node, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.nodeLocked(rackID, nodeID)
}

func (r *Registry) nodeLocked(rackID, nodeID string) (hw.Node, error) {
	rk, ok := r.racks[rackID]
	if !ok {
		return hw.Node{}, rackNotFound(rackID)
	}
	n, ok := rk.nodes[nodeID]
	if !ok {
		return hw.Node{}, nodeNotFound(rackID, nodeID)
	}
	return n, nil
}

// Racks returns the registered rack ids, sorted.
func (r *Registry) Racks() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, 0, len(r.racks))
	for id := range r.racks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Nodes returns every registered node, by rack then node id.
func (r *Registry) Nodes() []hw.Node {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []hw.Node
	for _, rk := range r.racks {
		for _, n := range rk.nodes {
			out = append(out, n)
		}
	}
	sortNodes(out)
	return out
}

// RackNodes returns every node of a rack, by node id; a registered rack
// without nodes has none.
func (r *Registry) RackNodes(rackID string) ([]hw.Node, error) {
	return r.rackNodes(rackID, func(hw.Node) bool { return true })
}

// NodesOfType returns the nodes of one type in a rack, by node id.
func (r *Registry) NodesOfType(rackID string, t hw.NodeType) ([]hw.Node, error) {
	return r.rackNodes(rackID, func(n hw.Node) bool { return n.Type == t })
}

// rackNodes returns the nodes of a rack that keep selects, by node id.
func (r *Registry) rackNodes(rackID string, keep func(hw.Node) bool) ([]hw.Node, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rk, ok := r.racks[rackID]
	if !ok {
		return nil, rackNotFound(rackID)
	}
	out := []hw.Node{}
	for _, n := range rk.nodes {
		if keep(n) {
			out = append(out, n)
		}
	}
	sortNodes(out)
	return out, nil
}

func sortNodes(nodes []hw.Node) {
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].RackID != nodes[j].RackID {
			return nodes[i].RackID < nodes[j].RackID
		}
		return nodes[i].ID < nodes[j].ID
	})
}

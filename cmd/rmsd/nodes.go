package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/keyring"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// Registered nodes (CreateNodes, UpdateNode, DeleteNode) persist in the
// store when [storage] encryption_key_file names a key file: each node's
// settings, credentials included, are sealed with the file's first key
// (store/keyring) and bound to the node's identity. At start they are
// registered again before rmsd serves, and every later change is written
// before the RPC that made it returns.

// defaultNodeWriteTimeout bounds writing one node change to the store when
// [storage] timeout_seconds is not set (tests that build a bare config).
const defaultNodeWriteTimeout = sqlstore.DefaultReadTimeout

// nodeDoc is a node's settings as sealed in the store (version 1).
type nodeDoc struct {
	V                   int           `json:"v"`
	Type                hw.NodeType   `json:"type"`
	BMC                 *endpointDoc  `json:"bmc,omitempty"`
	Host                *endpointDoc  `json:"host,omitempty"`
	AdditionalHosts     []endpointDoc `json:"additional_hosts,omitempty"`
	InventoryProfile    string        `json:"inventory_profile,omitempty"`
	HasInventoryProfile bool          `json:"has_inventory_profile,omitempty"`
}

type endpointDoc struct {
	IP       string `json:"ip,omitempty"`
	MAC      string `json:"mac,omitempty"`
	HostName string `json:"host_name,omitempty"`
	Port     int    `json:"port,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Token    string `json:"token,omitempty"`
}

func endpointToDoc(e *hw.Endpoint) *endpointDoc {
	if e == nil {
		return nil
	}
	return &endpointDoc{IP: e.IP, MAC: e.MAC, HostName: e.HostName, Port: e.Port, Username: e.Credentials.Username,
		Password: e.Credentials.Password.Reveal(), Token: e.Credentials.Token.Reveal()}
}

func (d *endpointDoc) endpoint() *hw.Endpoint {
	if d == nil {
		return nil
	}
	return &hw.Endpoint{IP: d.IP, MAC: d.MAC, HostName: d.HostName, Port: d.Port, Credentials: hw.Credentials{
		Username: d.Username, Password: hw.NewSecret(d.Password), Token: hw.NewSecret(d.Token)}}
}

// nodeAAD binds a sealed node to its identity.
func nodeAAD(rackID, nodeID string) []byte { return []byte(rackID + "\x00" + nodeID) }

// nodeStore writes registered nodes to the store, sealed.
type nodeStore struct {
	st   store.Nodes
	keys *keyring.Keyring
	log  zerolog.Logger
	// timeout bounds writing one node change ([storage] timeout_seconds):
	// a store that has not taken it by then refuses it as unavailable.
	timeout time.Duration
	// racks are the racks the store has recorded (a rack is written once).
	// The registry calls its observer without its own lock, for several
	// nodes at once, so mu guards racks.
	mu    sync.Mutex
	racks map[string]bool
	// reg is the registry the nodes are restored into (and reloaded into,
	// in cluster mode).
	reg *racks.Registry
	// changed, when set, is told of every rack whose nodes this member
	// wrote (cluster mode: every member reloads the rack).
	changed func(rackID string)
}

// seal returns n's store record.
func (s *nodeStore) seal(n hw.Node) (store.NodeRecord, error) {
	doc := nodeDoc{V: 1, Type: n.Type, BMC: endpointToDoc(n.BMC), Host: endpointToDoc(n.Host),
		InventoryProfile: n.InventoryProfile, HasInventoryProfile: n.HasInventoryProfile}
	for _, h := range n.AdditionalHosts {
		doc.AdditionalHosts = append(doc.AdditionalHosts, *endpointToDoc(&h))
	}
	plain, err := json.Marshal(doc)
	if err != nil {
		return store.NodeRecord{}, fmt.Errorf("encode node %s/%s: %w", n.RackID, n.ID, err)
	}
	keyID, sealed, err := s.keys.Seal(plain, nodeAAD(n.RackID, n.ID))
	if err != nil {
		return store.NodeRecord{}, err
	}
	return store.NodeRecord{RackID: n.RackID, NodeID: n.ID, KeyID: keyID, Sealed: sealed}, nil
}

// open returns the node a record holds.
func (s *nodeStore) open(rec store.NodeRecord) (hw.Node, error) {
	plain, err := s.keys.Open(rec.KeyID, rec.Sealed, nodeAAD(rec.RackID, rec.NodeID))
	if err != nil {
		return hw.Node{}, err
	}
	var doc nodeDoc
	if err := json.Unmarshal(plain, &doc); err != nil || doc.V != 1 {
		return hw.Node{}, fmt.Errorf("sealed settings are not a version 1 node document")
	}
	n := hw.Node{ID: rec.NodeID, RackID: rec.RackID, Type: doc.Type, BMC: doc.BMC.endpoint(), Host: doc.Host.endpoint(),
		InventoryProfile: doc.InventoryProfile, HasInventoryProfile: doc.HasInventoryProfile}
	for _, h := range doc.AdditionalHosts {
		n.AdditionalHosts = append(n.AdditionalHosts, *h.endpoint())
	}
	return n, nil
}

// observe writes one change of the registry before it is made
// (racks.Observer): a change the store did not take is refused, so what a
// caller was told is registered is what a restart brings back.
func (s *nodeStore) observe(ref hw.Ref, n *hw.Node) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var err error
	if n == nil {
		if err = s.st.DeleteNode(ctx, ref.RackID, ref.NodeID); errors.Is(err, store.ErrNotFound) {
			err = nil
		}
	} else {
		err = s.put(ctx, *n)
	}
	if err != nil && !errors.Is(err, store.ErrUnavailable) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The change's own deadline ran out between its two writes.
		err = fmt.Errorf("no answer from the database within %s, retry once it answers: %w: %w", s.timeout, store.ErrUnavailable, err)
	}
	if err != nil {
		s.log.Error().Err(err).Str("rack_id", ref.RackID).Str("node_id", ref.NodeID).
			Msg("registered node change refused: the node store did not take it")
		return fmt.Errorf("the node store is unavailable: %w", err)
	}
	if s.changed != nil {
		s.changed(ref.RackID)
	}
	return nil
}

// put stores a node, and its rack with the rack's family (kept once
// recorded, so a rack emptied by DeleteNode comes back after a restart).
func (s *nodeStore) put(ctx context.Context, n hw.Node) error {
	rec, err := s.seal(n)
	if err == nil && !s.rackRecorded(n.RackID) {
		if err = s.st.PutRack(ctx, store.RackRecord{RackID: n.RackID, Family: string(n.Type.Family())}); err == nil {
			s.recordRack(n.RackID)
		}
	}
	if err == nil {
		_, err = s.st.PutNode(ctx, rec)
	}
	return err
}

func (s *nodeStore) rackRecorded(rackID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.racks[rackID]
}

func (s *nodeStore) recordRack(rackID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.racks[rackID] = true
}

// restoreNodes registers the persisted nodes again and persists every
// later change, when [storage] encryption_key_file is set; without it, it
// says once that nodes are not persisted. Records sealed with an older key
// of the file are sealed again with its first key. A node that no longer
// opens (its key removed from the file) or no longer registers is logged
// and left in the store.
func restoreNodes(ctx context.Context, cfg config.Storage, st store.Nodes, reg *racks.Registry, log zerolog.Logger) error {
	_, err := loadNodes(ctx, cfg, st, reg, log)
	return err
}

// loadNodes is restoreNodes returning the node store that persists the
// changes (nil when nodes are not persisted).
func loadNodes(ctx context.Context, cfg config.Storage, st store.Nodes, reg *racks.Registry, log zerolog.Logger) (*nodeStore, error) {
	if cfg.EncryptionKeyFile == "" {
		log.Warn().Msg("registered nodes are not persisted: [storage] encryption_key_file is not set, so nodes added with CreateNodes are lost at restart")
		return nil, nil
	}
	keys, err := keyring.Load(cfg.EncryptionKeyFile)
	if err != nil {
		return nil, fmt.Errorf("[storage] encryption_key_file: %w", err)
	}
	s := &nodeStore{st: st, keys: keys, log: log, timeout: defaultNodeWriteTimeout, racks: map[string]bool{}, reg: reg}
	if cfg.TimeoutSeconds > 0 {
		s.timeout = time.Duration(cfg.TimeoutSeconds) * time.Second
	}
	recs, err := st.ListNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("read registered nodes: %w", err)
	}
	var nodes []hw.Node
	var stale []bool
	for _, rec := range recs {
		n, err := s.open(rec)
		if err != nil {
			log.Error().Err(err).Str("rack_id", rec.RackID).Str("node_id", rec.NodeID).Str("key_id", rec.KeyID).
				Msg("registered node not restored: its settings do not open with the key file")
			continue
		}
		nodes = append(nodes, n)
		stale = append(stale, rec.KeyID != keys.Current())
	}
	restored, resealed := 0, 0
	for i, err := range reg.Create(nodes) {
		if err != nil {
			log.Error().Err(err).Str("rack_id", nodes[i].RackID).Str("node_id", nodes[i].ID).Msg("registered node not restored")
			continue
		}
		restored++
		if stale[i] {
			if err := s.put(ctx, nodes[i]); err != nil {
				return nil, fmt.Errorf("seal node %s/%s with key %q: %w", nodes[i].RackID, nodes[i].ID, keys.Current(), err)
			}
			resealed++
		}
	}
	empty, err := s.restoreRacks(ctx, reg, nodes)
	if err != nil {
		return nil, err
	}
	reg.Observe(s.observe)
	log.Info().Int("nodes", restored).Int("empty_racks", empty).Int("resealed", resealed).Str("key_id", keys.Current()).Msg("registered nodes restored")
	return s, nil
}

// restoreRacks registers the recorded racks that have no node left, and
// records the racks of restored nodes that were stored before racks were
// (so they too outlive their last node). It returns how many racks came
// back empty.
func (s *nodeStore) restoreRacks(ctx context.Context, reg *racks.Registry, nodes []hw.Node) (int, error) {
	recs, err := s.st.ListRacks(ctx)
	if err != nil {
		return 0, fmt.Errorf("read registered racks: %w", err)
	}
	for _, r := range recs {
		s.recordRack(r.RackID)
	}
	for _, n := range nodes {
		if !s.rackRecorded(n.RackID) {
			if err := s.st.PutRack(ctx, store.RackRecord{RackID: n.RackID, Family: string(n.Type.Family())}); err != nil {
				return 0, fmt.Errorf("record rack %s: %w", n.RackID, err)
			}
			s.recordRack(n.RackID)
		}
	}
	present := map[string]bool{}
	for _, id := range reg.Racks() {
		present[id] = true
	}
	empty := 0
	for _, r := range recs {
		if !present[r.RackID] {
			reg.RestoreRack(r.RackID, hw.ProductFamily(r.Family))
			empty++
		}
	}
	return empty, nil
}

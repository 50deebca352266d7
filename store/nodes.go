package store

import (
	"context"
	"fmt"
	"time"
)

// Nodes keeps the registered nodes (CreateNodes, UpdateNode, DeleteNode)
// across restarts. A record's identity is in the clear; its settings,
// credentials included, are sealed by the caller (see store/keyring): the
// store never sees a secret.
type Nodes interface {
	// PutNode inserts or replaces the record of (RackID, NodeID) and
	// returns it with UpdatedAt set.
	PutNode(ctx context.Context, n NodeRecord) (NodeRecord, error)
	// DeleteNode removes a record; ErrNotFound when there is none.
	DeleteNode(ctx context.Context, rackID, nodeID string) error
	// ListNodes returns every record, by rack then node.
	ListNodes(ctx context.Context) ([]NodeRecord, error)
	// PutRack records a rack with its product family unless it is
	// recorded already (a rack keeps its family). Racks are never
	// removed: one left without nodes stays registered.
	PutRack(ctx context.Context, r RackRecord) error
	// ListRacks returns every recorded rack, by id.
	ListRacks(ctx context.Context) ([]RackRecord, error)
}

// RackRecord is one registered rack: its id and the product family its
// nodes must belong to.
type RackRecord struct {
	RackID string
	Family string
}

// NodeRecord is one registered node as kept in the store.
type NodeRecord struct {
	RackID string
	NodeID string
	// KeyID names the key that sealed Sealed.
	KeyID string
	// Sealed is the node's settings, encrypted.
	Sealed    []byte
	UpdatedAt time.Time
}

// Validate checks a record about to be stored.
func (n NodeRecord) Validate() error {
	switch {
	case n.RackID == "" || n.NodeID == "":
		return fmt.Errorf("node record: rack_id and node_id are required: %w", ErrInvalid)
	case n.KeyID == "" || len(n.Sealed) == 0:
		return fmt.Errorf("node record %s/%s: key id and sealed settings are required: %w", n.RackID, n.NodeID, ErrInvalid)
	}
	return nil
}

package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/store"
)

// Object is a firmware object as the catalog RPCs answer it: the stored
// object and what its manifest offers.
type Object struct {
	store.FirmwareObject
	// Metadata is resolved from ConfigJSON, which is parsed the first time
	// the object is added or read; it always agrees with the manifest as
	// stored.
	Metadata manifest.Metadata
}

// Get returns one object, or an error matching ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (Object, error) {
	obj, err := s.store.GetFirmwareObject(ctx, id)
	if err != nil {
		return Object{}, s.storeError("read firmware object", id, err)
	}
	return s.resolve(obj), nil
}

// List returns the objects f selects (its conditions AND-ed), newest
// first.
func (s *Service) List(ctx context.Context, f store.ObjectFilter) ([]Object, error) {
	objs, err := s.store.ListFirmwareObjects(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("catalog: list firmware objects: %w", err)
	}
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = s.resolve(o)
	}
	return out, nil
}

// SetDefault makes the object the default of its hardware type, in place
// of any other, atomically (the store keeps one default per hardware
// type). It returns the object, or an error matching ErrNotFound. An
// object need not be available to be the default: ApplyStored* refuses an
// unavailable one when it is used.
func (s *Service) SetDefault(ctx context.Context, id string) (Object, error) {
	obj, err := s.store.SetDefaultFirmwareObject(ctx, id)
	if err != nil {
		return Object{}, s.storeError("set default firmware object", id, err)
	}
	s.feed.Publish(Change{Kind: DefaultChanged, ObjectID: id, HardwareType: obj.HardwareType, IsDefault: true})
	s.log.Info().Str("object_id", id).Str("hardware_type", obj.HardwareType).Msg("firmware object is the default of its hardware type")
	return s.resolve(obj), nil
}

// resolve adds the manifest's metadata to a stored object. A manifest
// stored by an older rmsd that this one refuses keeps its object readable,
// without metadata, and is logged.
func (s *Service) resolve(obj store.FirmwareObject) Object {
	m, err := s.manifestOf(obj)
	if err != nil {
		s.log.Warn().Str("object_id", obj.ID).Err(err).Msg("stored firmware manifest no longer parses; answering it without metadata")
		return Object{FirmwareObject: obj}
	}
	return Object{FirmwareObject: obj, Metadata: m.Metadata()}
}

// manifestOf returns the parsed manifest of a stored object, parsing its
// ConfigJSON only when it has not been parsed before.
func (s *Service) manifestOf(obj store.FirmwareObject) (*manifest.Manifest, error) {
	s.mu.Lock()
	p, ok := s.manifests[obj.ID]
	s.mu.Unlock()
	if ok && p.config == obj.ConfigJSON {
		return p.m, nil
	}
	m, err := manifest.Parse([]byte(obj.ConfigJSON), s.mopts)
	if err != nil {
		return nil, err
	}
	s.keepManifest(obj.ID, obj.ConfigJSON, m)
	return m, nil
}

// keepManifest remembers object id's manifest, parsed from config.
func (s *Service) keepManifest(id, config string, m *manifest.Manifest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manifests[id] = parsedManifest{config: config, m: m}
}

// dropManifest forgets the manifest of a deleted object.
func (s *Service) dropManifest(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.manifests, id)
}

// storeError translates a store failure about object id.
func (s *Service) storeError(what, id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id, err)
	}
	return fmt.Errorf("catalog: %s %q: %w", what, id, err)
}

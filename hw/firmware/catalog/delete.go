package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Delete removes an object from the catalog, cancels its download (or
// re-verification) and waits for it to stop, then removes its cache
// directory. Its default mark goes with it; the apply history is kept. It
// returns an error matching ErrNotFound when no object has the id. A cache
// that cannot be removed is logged: the object is gone all the same, and a
// later object of the same id reuses what is there only after verifying it.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.serial.Lock()
	defer s.serial.Unlock()
	obj, err := s.store.DeleteFirmwareObject(ctx, id)
	if err != nil {
		return s.storeError("delete firmware object", id, err)
	}
	s.stop(id, errDeleted)
	s.dropManifest(id)
	s.feed.Publish(Change{Kind: ObjectDeleted, ObjectID: id, HardwareType: obj.HardwareType})
	log := s.log.With().Str("object_id", id).Str("hardware_type", obj.HardwareType).Logger()
	if err := s.removeCache(id); err != nil {
		log.Warn().Err(err).Msg("firmware object deleted, but its cache could not be removed")
	}
	log.Info().Bool("was_available", obj.Available).Bool("was_default", obj.IsDefault).Msg("firmware object deleted")
	return nil
}

// removeCache removes object id's cache directory through an os.Root, so
// that nothing outside objects/ is ever removed (a symbolic link in its
// place is removed, not followed).
func (s *Service) removeCache(id string) error {
	root, err := os.OpenRoot(s.objectsRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("catalog: open the firmware object cache: %w", err)
	}
	defer root.Close()
	if err := root.RemoveAll(id); err != nil {
		return fmt.Errorf("catalog: remove the cache of %q: %w", id, err)
	}
	return nil
}

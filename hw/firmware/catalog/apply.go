package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// ErrUnavailable: the firmware object exists but its artifacts are not all
// downloaded and verified, so it cannot be applied yet.
var ErrUnavailable = errors.New("catalog: firmware object not available")

// ErrHardwareMismatch: the object named is of another hardware type than
// the request's.
var ErrHardwareMismatch = errors.New("catalog: firmware object of another hardware type")

// AnyHardware is the hardware type of an object that applies to every
// hardware type (upstream's RackHardwareType::any).
const AnyHardware = "any"

// Applicable is a stored object ready to be applied: available, with its
// manifest's metadata and the directory its packages are cached in.
type Applicable struct {
	Object
	// Dir is <firmware_dir>/objects/<id>.
	Dir string
}

// ForApply returns the object an ApplyStored* request names: id, or the
// default object of hardwareType when id is empty. Named by id with a
// hardwareType, the object must be of that type unless either is
// AnyHardware. It must be available. Refusals match ErrNotFound (no such
// object, or no default for the hardware type), ErrHardwareMismatch,
// ErrUnavailable (the Applicable returned then holds the object, so that
// the caller can name it) or ErrInvalid (neither id nor hardware type).
func (s *Service) ForApply(ctx context.Context, id, hardwareType string) (Applicable, error) {
	var obj store.FirmwareObject
	var err error
	switch {
	case id != "":
		obj, err = s.store.GetFirmwareObject(ctx, id)
		if err != nil {
			return Applicable{}, s.storeError("read firmware object", id, err)
		}
	case hardwareType != "":
		obj, err = s.store.DefaultFirmwareObject(ctx, hardwareType)
		if errors.Is(err, store.ErrNotFound) {
			return Applicable{}, &Error{Kind: ErrNotFound, Err: err,
				Msg: fmt.Sprintf("no default firmware object for hardware_type %q", hardwareType)}
		}
		if err != nil {
			return Applicable{}, fmt.Errorf("catalog: read the default firmware object of %q: %w", hardwareType, err)
		}
	default:
		return Applicable{}, invalidf("object_id or hardware_type is required")
	}
	if err := matchHardware(obj, hardwareType); err != nil {
		return Applicable{}, err
	}
	if !obj.Available {
		msg := fmt.Sprintf("firmware object %q is not available yet (its artifacts are still downloading or failed)", obj.ID)
		if obj.UnavailableReason != "" {
			msg = fmt.Sprintf("firmware object %q is not available: %s", obj.ID, obj.UnavailableReason)
		}
		return Applicable{Object: Object{FirmwareObject: obj}}, &Error{Kind: ErrUnavailable, Msg: msg}
	}
	dir, err := s.cacheDir(obj.ID, false)
	if err != nil {
		return Applicable{}, err
	}
	o := s.resolve(obj)
	if len(o.Metadata.DeviceComponents) == 0 && len(o.Metadata.SwitchSystemImages) == 0 {
		return Applicable{}, invalidf("firmware object %q: its stored manifest no longer parses", obj.ID)
	}
	return Applicable{Object: o, Dir: dir}, nil
}

// matchHardware refuses an object of another hardware type than the
// request's, as upstream's resolve_requested_firmware: an empty request
// type, or an object of AnyHardware, matches every type. (A request of
// AnyHardware matches every object too: it asks for no particular type.)
func matchHardware(obj store.FirmwareObject, hardwareType string) error {
	if hardwareType == "" || hardwareType == AnyHardware || obj.HardwareType == AnyHardware || obj.HardwareType == hardwareType {
		return nil
	}
	return &Error{Kind: ErrHardwareMismatch, Msg: fmt.Sprintf("firmware object %s hardware type %s does not match request hardware type %s",
		obj.ID, obj.HardwareType, hardwareType)}
}

// RecordApply appends a record to the apply history.
func (s *Service) RecordApply(ctx context.Context, r store.ApplyRecord) error {
	if _, err := s.store.RecordApply(ctx, r); err != nil {
		return fmt.Errorf("catalog: record the apply of %s: %w", r.ObjectID, err)
	}
	return nil
}

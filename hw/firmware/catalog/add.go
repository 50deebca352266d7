package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/confine"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/store"
)

// AddRequest is an AddFirmwareObject request.
type AddRequest struct {
	// ConfigJSON is the firmware manifest, stored as given.
	ConfigJSON string
	// HardwareType is the caller's free-form hardware class ("gb200-nvl",
	// "any"); defaults are scoped by it. Required.
	HardwareType string
	// AccessToken is the request's access_token as sent: empty, white
	// space and NOAUTH mean none. It is used for this object's download
	// only, and never stored or logged.
	AccessToken hw.Secret
	// SetDefault makes the object the default of its hardware type in the
	// same transaction that stores it. The first object of a hardware type
	// becomes its default without it.
	SetDefault bool
}

// maxAccessToken bounds the access token: it goes into an HTTP header.
const maxAccessToken = 8 << 10

// Add validates the manifest (manifest.Parse, then Downloader.Check),
// stores the object unavailable with its artifacts pending (and, with
// SetDefault or when its hardware type has no default yet, as the default
// of its hardware type), starts downloading its artifacts in the
// background and returns the object as stored. An object with no artifact
// to download is available at once.
//
// Refusals match ErrInvalid (with manifest.ErrInvalid for a manifest
// manifest.Parse refuses; "hardware_type is required" when HardwareType
// is empty), ErrExists when an object has the manifest's id (ids are free
// again once deleted) and ErrClosed after Close.
func (s *Service) Add(ctx context.Context, req AddRequest) (Object, error) {
	m, err := manifest.Parse([]byte(req.ConfigJSON), s.mopts)
	if err != nil {
		return Object{}, invalid(err)
	}
	// Checked after the manifest, as upstream's handle_add_firmware_object.
	if req.HardwareType == "" {
		return Object{}, invalidf("hardware_type is required")
	}
	token := download.AccessToken(req.AccessToken.Reveal()) // NOAUTH and blanks: none
	if err := checkAccessToken(token); err != nil {
		return Object{}, err
	}
	arts := m.Artifacts()
	if err := s.dl.Check(arts); err != nil {
		return Object{}, invalid(fmt.Errorf("config_json: an artifact cannot be fetched: %w", err))
	}
	for _, w := range m.Warnings {
		s.log.Warn().Str("object_id", m.ID).Str("warning", w).Msg("firmware manifest accepted with a warning")
	}

	s.serial.Lock()
	defer s.serial.Unlock()
	if s.isClosed() {
		return Object{}, ErrClosed
	}
	dir, err := s.cacheDir(m.ID, true)
	if err != nil {
		return Object{}, err
	}
	obj := store.FirmwareObject{
		ID: m.ID, HardwareType: req.HardwareType, ConfigJSON: req.ConfigJSON,
		Available: len(arts) == 0, Artifacts: storeArtifacts(m, arts), Downloader: s.member,
	}
	created, err := s.create(ctx, obj, req.SetDefault)
	if err != nil {
		return Object{}, err
	}
	s.keepManifest(m.ID, req.ConfigJSON, m)
	s.feed.Publish(Change{Kind: ObjectAdded, ObjectID: m.ID, HardwareType: req.HardwareType,
		Available: created.Available, IsDefault: created.IsDefault})
	// The download waits for the "added" line below, so that the log never
	// tells of the object available or failed before it tells of it added.
	added := make(chan struct{})
	defer close(added)
	started := len(arts) > 0 && s.start(m.ID, func(ctx context.Context) {
		<-added
		s.download(ctx, m.ID, dir, arts, token)
	})
	s.log.Info().Str("object_id", m.ID).Str("hardware_type", req.HardwareType).Int("artifacts", len(arts)).
		Bool("default", created.IsDefault).Bool("available", created.Available).Bool("token", !token.IsZero()).
		Bool("download_started", started).Msg("firmware object added")
	return Object{FirmwareObject: created, Metadata: m.Metadata()}, nil
}

// create stores obj and, with setDefault or when its hardware type has no
// default yet (upstream's handle_add_firmware_object: set_default ||
// !has_default), makes it the default of its hardware type, in one
// transaction.
func (s *Service) create(ctx context.Context, obj store.FirmwareObject, setDefault bool) (store.FirmwareObject, error) {
	var created store.FirmwareObject
	err := s.store.Update(ctx, func(tx store.Tx) error {
		var err error
		if created, err = tx.CreateFirmwareObject(ctx, obj); err != nil {
			return err
		}
		if !setDefault {
			_, err = tx.DefaultFirmwareObject(ctx, obj.HardwareType)
			if !errors.Is(err, store.ErrNotFound) {
				return err // nil: the hardware type has its default
			}
		}
		created, err = tx.SetDefaultFirmwareObject(ctx, obj.ID)
		return err
	})
	switch {
	case errors.Is(err, store.ErrExists):
		return created, &Error{Kind: ErrExists, Err: err,
			Msg: fmt.Sprintf("firmware object %q already exists; delete it first to add it again", obj.ID)}
	case err != nil:
		return created, fmt.Errorf("catalog: store firmware object %q: %w", obj.ID, err)
	}
	return created, nil
}

// checkAccessToken refuses a token that cannot be sent as an HTTP header
// value. The refusal never quotes it.
func checkAccessToken(tok hw.Secret) error {
	v := tok.Reveal()
	if len(v) > maxAccessToken {
		return invalidf("access_token is %d bytes long; at most %d are accepted", len(v), maxAccessToken)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return invalidf("access_token holds a control character at byte %d; it cannot be sent as an HTTP header", i)
		}
	}
	return nil
}

// storeArtifacts describes the manifest's artifacts for the store, each
// with the channel of the first component or image that uses it.
func storeArtifacts(m *manifest.Manifest, arts []manifest.Artifact) []store.Artifact {
	channel := map[string]string{}
	md := m.Metadata()
	for _, dc := range md.DeviceComponents {
		for _, c := range dc.Components {
			for _, a := range c.Artifacts {
				if _, ok := channel[a.FileName]; !ok {
					channel[a.FileName] = a.FirmwareType
				}
			}
		}
	}
	for _, img := range md.SwitchSystemImages {
		if _, ok := channel[img.ImageFileName]; !ok && img.ImageFileName != "" {
			channel[img.ImageFileName] = img.SoftwareType
		}
	}
	out := make([]store.Artifact, len(arts))
	for i, a := range arts {
		// The location as logs show it: a URL without its query, which may
		// carry a signature (the manifest itself is kept as given).
		out[i] = store.Artifact{Name: a.Name, Location: a.Source.String(), SHA256: a.Sha256, FirmwareType: channel[a.Name]}
	}
	return out
}

// cacheDir returns the cache directory of object id,
// <firmware_dir>/objects/<id>, confined to one name below objects/ (no
// "..", no symbolic link out). With create it creates objects/ first;
// the object's own directory is left to the download.
func (s *Service) cacheDir(id string, create bool) (string, error) {
	root := s.objectsRoot()
	if create {
		if err := os.MkdirAll(root, 0o750); err != nil {
			return "", fmt.Errorf("catalog: create the firmware object cache %s: %w", root, err)
		}
	}
	dir, err := confine.Path(root, id)
	if err != nil {
		if errors.Is(err, confine.ErrEscapes) || errors.Is(err, confine.ErrInvalidName) {
			return "", invalidf("object id %q cannot name a cache directory: %v", id, err)
		}
		return "", fmt.Errorf("catalog: cache directory of %q: %w", id, err)
	}
	return dir, nil
}

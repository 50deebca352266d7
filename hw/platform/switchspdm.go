package platform

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/hw/nvue"
)

// SwitchSpdm is the SPDM attestation of a switch tray through NVUE: each
// method is one exchange with the switch, so the order of components, the
// polling and the deadlines are the caller's (hw/spdm). Evidence is opaque
// normalised JSON the adapter never logs.
type SwitchSpdm interface {
	// SpdmComponents lists the switch's SPDM component ids, sorted.
	SpdmComponents(ctx context.Context) ([]string, error)
	// StartSpdmGeneration starts fresh evidence of component bound to
	// nonce and returns the NVUE action id.
	StartSpdmGeneration(ctx context.Context, component string, nonce []byte) (string, error)
	// SpdmGenerationDone reads that action: false while it runs, true
	// once it succeeded, an error when it failed or its status is not
	// understood (nvue.Client.SpdmGenerationDone).
	SpdmGenerationDone(ctx context.Context, actionID string) (bool, error)
	// SpdmEvidence reads component's measurements and certificate chain.
	SpdmEvidence(ctx context.Context, component string) (measurements, certificates []byte, err error)
}

var _ SwitchSpdm = (*switchDevice)(nil)

// spdmClient is the switch's NVUE client, or ErrUnsupported without a
// host endpoint.
func (s *switchDevice) spdmClient() (*nvue.Client, error) {
	if s.nvue == nil {
		return nil, unsupported(s.cfg.ID, s.cfg.Type, "SPDM attestation without a host endpoint")
	}
	return s.nvue, nil
}

func (s *switchDevice) SpdmComponents(ctx context.Context) ([]string, error) {
	c, err := s.spdmClient()
	if err != nil {
		return nil, err
	}
	ids, err := c.SpdmComponents(ctx)
	if err != nil {
		return nil, fmt.Errorf("SPDM components of %s: %w", s.cfg.ID, err)
	}
	return ids, nil
}

func (s *switchDevice) StartSpdmGeneration(ctx context.Context, component string, nonce []byte) (string, error) {
	c, err := s.spdmClient()
	if err != nil {
		return "", err
	}
	return c.GenerateSpdmEvidence(ctx, component, nonce)
}

func (s *switchDevice) SpdmGenerationDone(ctx context.Context, actionID string) (bool, error) {
	c, err := s.spdmClient()
	if err != nil {
		return false, err
	}
	return c.SpdmGenerationDone(ctx, actionID)
}

func (s *switchDevice) SpdmEvidence(ctx context.Context, component string) ([]byte, []byte, error) {
	c, err := s.spdmClient()
	if err != nil {
		return nil, nil, err
	}
	m, err := c.SpdmMeasurements(ctx, component)
	if err != nil {
		return nil, nil, err
	}
	certs, err := c.SpdmCertificates(ctx, component)
	if err != nil {
		return nil, nil, err
	}
	return m, certs, nil
}

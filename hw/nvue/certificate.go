package nvue

import (
	"context"
	"fmt"
	"net/url"
)

// Certificates and mTLS bindings of NVOS services (southbound §3.11). The
// material itself never travels over NVUE: an import names files already
// copied to the switch, so a private key is only ever a file:// URI here.

// ImportCACertificate starts the @import of a CA certificate file into the
// switch's store under id and returns the action id.
func (c *Client) ImportCACertificate(ctx context.Context, id, uri string) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system/security/ca-certificate/"+url.PathEscape(id), "import",
		map[string]any{"uri": uri})
}

// ImportCertificate starts the @import of a certificate and its private
// key (both file:// URIs on the switch) under id and returns the action id.
func (c *Client) ImportCertificate(ctx context.Context, id, publicURI, privateURI string) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system/security/certificate/"+url.PathEscape(id), "import",
		map[string]any{"uri-public-key": publicURI, "uri-private-key": privateURI})
}

// Certificate reads an imported certificate (ca false) or CA certificate.
func (c *Client) Certificate(ctx context.Context, id string, ca bool) (map[string]any, error) {
	kind := "certificate"
	if ca {
		kind = "ca-certificate"
	}
	var out map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/system/security/"+kind+"/"+url.PathEscape(id), &out); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", kind, id, err)
	}
	return out, nil
}

// ServiceMTLS reads the mTLS settings of a service under /nvue_v1/system
// ("api" or "gnmi-server").
func (c *Client) ServiceMTLS(ctx context.Context, service string) (map[string]any, error) {
	var out map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/system/"+service+"/mtls", &out); err != nil {
		return nil, fmt.Errorf("read %s mtls: %w", service, err)
	}
	return out, nil
}

// BindServiceTLS makes a service under /nvue_v1/system ("api" or
// "gnmi-server") present certificate certID and require client
// certificates signed by caID, in one revision that is applied, waited for
// and saved. A revision that was not applied is deleted.
func (c *Client) BindServiceTLS(ctx context.Context, service, certID, caID string) error {
	rev, err := c.CreateRevision(ctx)
	if err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	applied := false
	defer func() {
		if !applied {
			// Best effort: the binding's own error is what the caller needs.
			_ = c.DeleteRevision(context.WithoutCancel(ctx), rev)
		}
	}()
	base := "/nvue_v1/system/" + service
	if err := c.Patch(ctx, rev, base, map[string]any{"certificate": certID}); err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	if err := c.Patch(ctx, rev, base+"/mtls", map[string]any{"ca-certificate": caID}); err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	if err := c.ApplyRevision(ctx, rev); err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	applied = true
	if err := c.WaitRevision(ctx, rev); err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	if err := c.SaveConfig(ctx, rev); err != nil {
		return fmt.Errorf("bind %s: %w", service, err)
	}
	return nil
}

package nvue

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// SPDM attestation evidence (southbound: /nvue_v1/system/security/spdm).
// The switch lists its SPDM components; an @generate action with a nonce
// makes one component produce fresh signed measurements, which are then
// read with the component's certificate chain. Both are opaque to rmsd:
// they are returned as normalised JSON and never logged. Every answer is
// bounded by the client's 8 MiB body limit.

const spdmPath = "/nvue_v1/system/security/spdm"

// SpdmComponents lists the SPDM component ids of the switch (the keys of
// the operational SPDM object, or of its "component" member), sorted.
func (c *Client) SpdmComponents(ctx context.Context) ([]string, error) {
	var m map[string]json.RawMessage
	if err := c.getJSON(ctx, spdmPath+"?rev=operational", &m); err != nil {
		return nil, fmt.Errorf("list SPDM components: %w", err)
	}
	if inner, ok := m["component"]; ok {
		m = nil
		if err := json.Unmarshal(inner, &m); err != nil {
			return nil, fmt.Errorf("list SPDM components: %w: component is not an object", ErrInvalidResponse)
		}
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("list SPDM components: %w: empty component id", ErrInvalidResponse)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// spdmComponentPath is the resource of one component, escaped.
func spdmComponentPath(component string) string {
	return spdmPath + "/" + url.PathEscape(component)
}

// GenerateSpdmEvidence starts @generate on component with the nonce
// hex-encoded, and returns the action id.
func (c *Client) GenerateSpdmEvidence(ctx context.Context, component string, nonce []byte) (string, error) {
	return c.postAction(ctx, spdmComponentPath(component), "generate", map[string]any{"nonce": hex.EncodeToString(nonce)})
}

// SpdmGenerationDone reads the action id of an @generate: false while it
// runs, true once it is action_success. A terminal failure is an
// *ActionError (ErrActionFailed); a state NVUE does not define, or none,
// is ErrInvalidResponse. Unlike WaitAction nothing is retried: a
// transport error is the caller's failure to report.
func (c *Client) SpdmGenerationDone(ctx context.Context, id string) (bool, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/action/"+url.PathEscape(id), &m); err != nil {
		return false, fmt.Errorf("read action %s: %w", id, err)
	}
	state, ok := m["state"].(string)
	if !ok {
		return false, fmt.Errorf("read action %s: %w: no state", id, ErrInvalidResponse)
	}
	switch strings.ToLower(state) {
	case "start", "running", "action_running", "inactive":
		return false, nil
	case "action_success":
		return true, nil
	case "action_error", "action_failed", "failed", "error":
		st := ActionStatus{ID: id, State: state}
		st.Status, _ = m["status"].(string)
		st.Detail, _ = m["detail"].(string)
		st.Detail = c.redact(st.Detail)
		st.Issues = issueTexts(m["issue"])
		for i, s := range st.Issues {
			st.Issues[i] = c.redact(s)
		}
		return false, &ActionError{Status: st}
	}
	return false, fmt.Errorf("read action %s: %w: unknown state %q", id, ErrInvalidResponse, clipState(state))
}

// clipState bounds a state echoed into an error.
func clipState(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// SpdmMeasurements reads the signed measurements of component, as
// normalised JSON.
func (c *Client) SpdmMeasurements(ctx context.Context, component string) ([]byte, error) {
	return c.spdmDocument(ctx, spdmComponentPath(component)+"/measurements", "measurements")
}

// SpdmCertificates reads the certificate chain of component, as
// normalised JSON.
func (c *Client) SpdmCertificates(ctx context.Context, component string) ([]byte, error) {
	return c.spdmDocument(ctx, spdmComponentPath(component)+"/certificates", "certificates")
}

// spdmDocument GETs path and normalises its JSON body: compact, object
// keys sorted, numbers as written.
func (c *Client) spdmDocument(ctx context.Context, path, what string) ([]byte, error) {
	raw, err := c.do(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read SPDM %s: %w", what, err)
	}
	doc, err := NormaliseJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("read SPDM %s: %w: %v", what, ErrInvalidResponse, err)
	}
	return doc, nil
}

// NormaliseJSON re-encodes one JSON value compactly with object keys
// sorted and numbers kept as written, so equal values encode alike.
func NormaliseJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

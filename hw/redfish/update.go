package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"
)

// UpdateServicePath is the update service resource.
const UpdateServicePath = "/redfish/v1/UpdateService"

// Default push URIs when the update service does not advertise them.
const (
	defaultMultipartURI = "/redfish/v1/UpdateService/update-multipart"
	defaultPushURI      = "/redfish/v1/UpdateService/update"
)

// ApplyOnReset is the ApplyTime power shelves need: stage now, activate on
// the next manager reset.
const ApplyOnReset = "OnReset"

// Firmware is a firmware file to upload.
type Firmware struct {
	// FileName is sent as the multipart file name (base name only).
	FileName string
	// Body is read once, streamed to the BMC.
	Body io.Reader
	// Size is the exact length of Body (required: uploads always carry a
	// Content-Length).
	Size int64
}

// MultipartUpdate is a compute/switch-BMC firmware update request.
type MultipartUpdate struct {
	// Targets are FirmwareInventory (or chassis) URIs; empty lets the BMC
	// pick (upstream sends [] for the BMC component).
	Targets     []string
	ForceUpdate bool
	// OemParameters, when set, is sent as the optional OemParameters part.
	OemParameters json.RawMessage
	File          Firmware
}

// UpdateStart is the outcome of an upload.
type UpdateStart struct {
	TaskID string
	// Skipped is set when the BMC said the firmware is already current.
	Skipped bool
	Reason  string
}

type updateService struct {
	ServiceEnabled     *bool  `json:"ServiceEnabled"`
	HTTPPushURI        string `json:"HttpPushUri"`
	MultipartPushURI   string `json:"MultipartHttpPushUri"`
	HTTPPushURIOptions struct {
		ApplyTime struct {
			ApplyTime string `json:"ApplyTime"`
		} `json:"HttpPushUriApplyTime"`
	} `json:"HttpPushUriOptions"`
}

func (c *Client) updateService(ctx context.Context) (updateService, error) {
	var us updateService
	if err := c.get(ctx, UpdateServicePath, &us); err != nil {
		return us, fmt.Errorf("read update service: %w", err)
	}
	if us.ServiceEnabled == nil || !*us.ServiceEnabled {
		return us, fmt.Errorf("update service is not enabled: %w", ErrActionUnavailable)
	}
	return us, nil
}

// skipHints are answers meaning "nothing to do, already current".
var skipHints = []string{"already up to date", "already up-to-date", "same version"}

func uploadOutcome(resp *response) (UpdateStart, error) {
	var flags struct {
		Skipped bool `json:"Skipped"`
	}
	_ = json.Unmarshal(resp.body, &flags) // a non-JSON answer has no flag
	low := strings.ToLower(string(resp.body))
	for _, h := range skipHints {
		if strings.Contains(low, h) {
			return UpdateStart{Skipped: true, Reason: h}, nil
		}
	}
	if flags.Skipped {
		return UpdateStart{Skipped: true, Reason: "Skipped"}, nil
	}
	id := taskIDFrom(resp.body, resp.header.Get("Location"))
	if id == "" {
		return UpdateStart{}, fmt.Errorf("upload accepted (HTTP %d) without a task reference: %w", resp.status, ErrInvalidResponse)
	}
	return UpdateStart{TaskID: id}, nil
}

// StartMultipartUpdate uploads a firmware package to the advertised
// MultipartHttpPushUri (parts UpdateParameters, UpdateFile, then the
// optional OemParameters) within UploadTimeout, and returns the task id.
func (c *Client) StartMultipartUpdate(ctx context.Context, u MultipartUpdate) (UpdateStart, error) {
	us, err := c.updateService(ctx)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("multipart update: %w", err)
	}
	uri := us.MultipartPushURI
	if uri == "" {
		uri = defaultMultipartURI
	}
	targets := u.Targets
	if targets == nil {
		targets = []string{}
	}
	params := map[string]any{"Targets": targets}
	if u.ForceUpdate {
		params["ForceUpdate"] = true
	}
	paramJSON, err := json.Marshal(params)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("multipart update: encode parameters: %w", err)
	}

	body, length, err := multipartBody(paramJSON, u)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("multipart update %s: %w", filepath.Base(u.File.FileName), err)
	}
	// Content-Length is always sent: some BMC web servers refuse chunked
	// uploads.
	resp, err := c.do(ctx, request{method: http.MethodPost, path: uri, body: body, length: length,
		ctype: body.contentType, timeout: c.pool.opts.UploadTimeout})
	if err != nil {
		return UpdateStart{}, fmt.Errorf("multipart update %s: %w", filepath.Base(u.File.FileName), err)
	}
	out, err := uploadOutcome(resp)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("multipart update: %w", err)
	}
	return out, nil
}

// multipartReader is a multipart/form-data body of known length.
type multipartReader struct {
	io.Reader
	contentType string
}

// multipartBody frames UpdateParameters, UpdateFile and the optional
// OemParameters around the file without buffering the file itself.
func multipartBody(params []byte, u MultipartUpdate) (*multipartReader, int64, error) {
	if u.File.Size <= 0 || u.File.Body == nil {
		return nil, 0, fmt.Errorf("firmware file size required: %w", ErrClient)
	}
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	jsonPart := func(name string, body []byte) error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, name))
		h.Set("Content-Type", "application/json")
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		_, err = w.Write(body)
		return err
	}
	if err := jsonPart("UpdateParameters", params); err != nil {
		return nil, 0, err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="UpdateFile"; filename=%q`, filepath.Base(u.File.FileName)))
	h.Set("Content-Type", "application/octet-stream")
	if _, err := mw.CreatePart(h); err != nil {
		return nil, 0, err
	}
	prefix := bytes.Clone(head.Bytes())
	head.Reset()
	if len(u.OemParameters) > 0 {
		if err := jsonPart("OemParameters", u.OemParameters); err != nil {
			return nil, 0, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, 0, err
	}
	tail.Write(head.Bytes())
	r := io.MultiReader(bytes.NewReader(prefix), io.LimitReader(u.File.Body, u.File.Size), &tail)
	return &multipartReader{Reader: r, contentType: mw.FormDataContentType()},
		int64(len(prefix)) + u.File.Size + int64(tail.Len()), nil
}

// EnsureApplyOnReset sets HttpPushUriApplyTime to OnReset unless it already
// is, PATCHing first with If-Match: * and again without it on 412.
func (c *Client) EnsureApplyOnReset(ctx context.Context) error {
	us, err := c.updateService(ctx)
	if err != nil {
		return fmt.Errorf("set apply time: %w", err)
	}
	if us.HTTPPushURIOptions.ApplyTime.ApplyTime == ApplyOnReset {
		return nil
	}
	body := map[string]any{"HttpPushUriOptions": map[string]any{
		"HttpPushUriApplyTime": map[string]string{"ApplyTime": ApplyOnReset}}}
	_, err = c.send(ctx, http.MethodPatch, UpdateServicePath, body, http.Header{"If-Match": {"*"}})
	if he, ok := err.(*HTTPError); ok && he.StatusCode == http.StatusPreconditionFailed {
		_, err = c.send(ctx, http.MethodPatch, UpdateServicePath, body, nil)
	}
	if err != nil {
		return fmt.Errorf("set apply time %s: %w", ApplyOnReset, err)
	}
	return nil
}

// PushShelfFirmware is the power-shelf update: ApplyTime=OnReset, then a raw
// application/octet-stream POST to HttpPushUri. The firmware is staged; a
// manager reset (RestartManagerAndWait) activates it.
func (c *Client) PushShelfFirmware(ctx context.Context, f Firmware) (UpdateStart, error) {
	if f.Size <= 0 {
		return UpdateStart{}, fmt.Errorf("shelf firmware push %s: size required: %w", filepath.Base(f.FileName), ErrClient)
	}
	if err := c.EnsureApplyOnReset(ctx); err != nil {
		return UpdateStart{}, fmt.Errorf("shelf firmware push: %w", err)
	}
	us, err := c.updateService(ctx)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("shelf firmware push: %w", err)
	}
	uri := us.HTTPPushURI
	if uri == "" {
		uri = defaultPushURI
	}
	resp, err := c.do(ctx, request{method: http.MethodPost, path: uri, body: io.LimitReader(f.Body, f.Size),
		ctype: "application/octet-stream", length: f.Size, header: http.Header{"Expect": {"100-continue"}},
		timeout: c.pool.opts.UploadTimeout})
	if err != nil {
		return UpdateStart{}, fmt.Errorf("shelf firmware push %s: %w", filepath.Base(f.FileName), err)
	}
	out, err := uploadOutcome(resp)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("shelf firmware push: %w", err)
	}
	return out, nil
}

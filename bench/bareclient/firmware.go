package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// uploadTimeout bounds one upload, as rmsd's [redfish] upload timeout.
const uploadTimeout = 600 * time.Second

// updateFirmware pushes file to the BMC of every node (its compute trays),
// as rmsd's firmware job of a compute tray does with force_update and no
// activation: the update preconditions (chassis, firmware inventory and
// task reads), the update service, a multipart push streamed from the
// file, and the task read every poll until it ends.
func (c *client) updateFirmware(ctx context.Context, nodes []node, file string, poll time.Duration) result {
	start := time.Now()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			if err := c.updateOne(ctx, n, file, poll); err != nil {
				fmt.Fprintf(os.Stderr, "bareclient: firmware update of %s: %v\n", n.base, err)
				failed.Add(1)
				return
			}
			ok.Add(1)
		})
	}
	wg.Wait()
	return result{took: time.Since(start), ok: int(ok.Load()), failed: int(failed.Load())}
}

// updateOne is one tray's update; each step takes one of the read slots,
// as each of rmsd's node operations does.
func (c *client) updateOne(ctx context.Context, n node, file string, poll time.Duration) error {
	var task string
	err := c.slot(ctx, func() error {
		if err := c.preconditions(ctx, n); err != nil {
			return err
		}
		var us struct {
			MultipartPushURI string `json:"MultipartHttpPushUri"`
		}
		if err := c.get(ctx, n, "/redfish/v1/UpdateService", &us); err != nil {
			return err
		}
		if us.MultipartPushURI == "" {
			us.MultipartPushURI = "/redfish/v1/UpdateService/update-multipart"
		}
		var err error
		task, err = c.push(ctx, n, us.MultipartPushURI, file)
		return err
	})
	if err != nil {
		return err
	}
	for {
		var state string
		err := c.slot(ctx, func() error {
			var t struct{ TaskState string }
			err := c.get(ctx, n, task, &t)
			state = t.TaskState
			return err
		})
		switch {
		case err != nil:
			return err
		case state == "Completed":
			return nil
		case state == "Exception" || state == "Cancelled" || state == "Killed":
			return fmt.Errorf("task %s ended %s", task, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// slot runs f holding one of the client's slots.
func (c *client) slot(ctx context.Context, f func() error) error {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.slots }()
	return f()
}

// preconditions reads what rmsd checks before an upload: every chassis,
// every firmware inventory member, every task.
func (c *client) preconditions(ctx context.Context, n node) error {
	for _, col := range []string{"/redfish/v1/Chassis", "/redfish/v1/UpdateService/FirmwareInventory", "/redfish/v1/TaskService/Tasks"} {
		var members struct{ Members []link }
		if err := c.get(ctx, n, col, &members); err != nil {
			return err
		}
		for _, m := range members.Members {
			var item struct {
				ID             string `json:"Id"`
				WriteProtected bool   `json:"WriteProtected"`
				TaskState      string `json:"TaskState"`
			}
			if err := c.get(ctx, n, m.ID, &item); err != nil {
				return err
			}
			if item.WriteProtected || item.TaskState == "Running" || item.TaskState == "Pending" {
				return fmt.Errorf("%s%s: not ready for an update", n.base, m.ID)
			}
		}
	}
	return nil
}

// push streams file as a multipart/form-data POST of UpdateParameters and
// UpdateFile with a Content-Length, and returns the task it names.
func (c *client) push(ctx context.Context, n node, uri, file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	var head strings.Builder
	mw := multipart.NewWriter(&head)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="UpdateParameters"`)
	h.Set("Content-Type", "application/json")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(pw, `{"ForceUpdate":true,"Targets":[]}`); err != nil {
		return "", err
	}
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="UpdateFile"; filename=%q`, filepath.Base(file)))
	h.Set("Content-Type", "application/octet-stream")
	if _, err := mw.CreatePart(h); err != nil {
		return "", err
	}
	prefix := head.String()
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	body := io.MultiReader(strings.NewReader(prefix), io.LimitReader(f, info.Size()), strings.NewReader(tail))

	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.base+uri, body)
	if err != nil {
		return "", err
	}
	req.ContentLength = int64(len(prefix)) + info.Size() + int64(len(tail))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(n.user, n.password)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody)); err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("POST %s%s: HTTP %d", n.base, uri, resp.StatusCode)
	}
	task := resp.Header.Get("Location")
	if task == "" {
		return "", errors.New("the upload named no task")
	}
	return task, nil
}

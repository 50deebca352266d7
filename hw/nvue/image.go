package nvue

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ImageState is GET /nvue_v1/system/image: the two NVOS partitions and
// which one runs now and after the next boot.
type ImageState struct {
	Current    int    // 1 or 2; 0 if unknown
	Next       int    // 1 or 2; 0 if unknown
	Partition1 string // build id, "" if empty
	Partition2 string
}

// CurrentBuild is the build id of the running partition.
func (s ImageState) CurrentBuild() string { return s.build(s.Current) }

// NextBuild is the build id that boots next.
func (s ImageState) NextBuild() string { return s.build(s.Next) }

// OtherBuild is the build id on the non-current partition.
func (s ImageState) OtherBuild() string {
	if s.Current == 0 {
		return ""
	}
	return s.build(3 - s.Current)
}

func (s ImageState) build(n int) string {
	switch n {
	case 1:
		return s.Partition1
	case 2:
		return s.Partition2
	}
	return ""
}

// partitionBuild reads a partition value: a string or {"build-id": ...}.
func partitionBuild(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		s, _ := t["build-id"].(string)
		return s
	}
	return ""
}

// partitionRef reads current/next: 1, 2, "1", "partition2" or a build id.
func partitionRef(v any, p1, p2 string) int {
	s, _ := scalarString(v)
	s = strings.TrimPrefix(strings.ToLower(s), "partition")
	switch {
	case s == "1":
		return 1
	case s == "2":
		return 2
	case s != "" && strings.EqualFold(s, p1):
		return 1
	case s != "" && strings.EqualFold(s, p2):
		return 2
	}
	return 0
}

// Image reads the partition state.
func (c *Client) Image(ctx context.Context) (ImageState, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/system/image", &m); err != nil {
		return ImageState{}, fmt.Errorf("read system image: %w", err)
	}
	st := ImageState{Partition1: partitionBuild(m["partition1"]), Partition2: partitionBuild(m["partition2"])}
	st.Current = partitionRef(m["current"], st.Partition1, st.Partition2)
	st.Next = partitionRef(m["next"], st.Partition1, st.Partition2)
	return st, nil
}

// ImageFiles lists the NVOS image files staged on the switch.
func (c *Client) ImageFiles(ctx context.Context) ([]string, error) {
	files, _, err := c.ImageFilesListing(ctx)
	return files, err
}

// ImageFilesListing is ImageFiles with the listing document as the switch
// answered it, compacted: what upstream's list_system_images passes
// through (NVUE answers an object keyed by file name).
func (c *Client) ImageFilesListing(ctx context.Context) (files []string, doc string, err error) {
	var raw json.RawMessage
	if err := c.getJSON(ctx, "/nvue_v1/system/image/files", &raw); err != nil {
		return nil, "", fmt.Errorf("list image files: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, "", fmt.Errorf("list image files: %w: %v", ErrInvalidResponse, err)
	}
	return names(v), compactDoc(raw), nil
}

// UninstallImage starts @uninstall (force) of the non-current partition and
// returns the action id. An action_error "Nothing to uninstall" means the
// partition was already empty (see IsNothingToUninstall).
func (c *Client) UninstallImage(ctx context.Context) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system/image", "uninstall", map[string]any{"force": true})
}

// IsNothingToUninstall reports an uninstall that failed only because the
// partition was empty, which callers treat as success.
func IsNothingToUninstall(st ActionStatus) bool {
	return strings.Contains(strings.ToLower(st.Message()), "nothing to uninstall")
}

// InstallImage starts @install (force) of a staged image file and returns
// the action id. The switch reboots into the new image when it is done.
func (c *Client) InstallImage(ctx context.Context, file string) (string, error) {
	return c.postAction(ctx, "/nvue_v1/system/image/files/"+url.PathEscape(file), "install",
		map[string]any{"force": true, "image-file": file})
}

var buildPattern = regexp.MustCompile(`\d+\.\d+\.\d+`)

// BuildIDFromFile returns "nvos-X.Y.Z" for an image file name containing
// exactly one X.Y.Z, the build id the switch reports once it runs it.
func BuildIDFromFile(file string) (string, error) {
	m := buildPattern.FindAllString(file, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("image file %q: %w: want exactly one X.Y.Z version", file, ErrRequest)
	}
	return "nvos-" + m[0], nil
}

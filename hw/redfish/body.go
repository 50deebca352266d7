package redfish

import (
	"fmt"
	"io"
	"net/http"
)

// readBody reads resp's body, at most limit bytes and one byte more (so
// that the caller can tell an oversized body). A body whose length the
// BMC announced is read into one buffer of that size; net/http holds the
// body to the announced length, so a longer one cannot spill. A chunked
// body is read as it comes.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= limit {
		body := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, fmt.Errorf("%d-byte body: %w", n, err)
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit+1))
}

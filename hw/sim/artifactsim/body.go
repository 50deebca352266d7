package artifactsim

import (
	"context"
	"io"
	"net/http"
	"time"
)

const defaultChunk = 32 << 10

// writeBody streams size bytes of content with the fault's misbehaviour.
// leave is called just before the last chunk is written, so the in-flight
// count never includes a request its client has already finished.
func (s *Server) writeBody(ctx context.Context, w http.ResponseWriter, content io.Reader, size int64, f Fault, leave func()) {
	chunk := f.ChunkBytes
	if chunk <= 0 {
		chunk = defaultChunk
	}
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, chunk)
	var sent int64
	for {
		if f.Stall && sent == f.StallAfter {
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-ctx.Done():
			case <-s.done:
			}
			return
		}
		want := int64(chunk)
		if f.Stall && f.StallAfter > sent && f.StallAfter-sent < want {
			want = f.StallAfter - sent
		}
		n, err := io.ReadFull(content, buf[:want])
		if n > 0 {
			if f.WrongBytes {
				for i := range buf[:n] {
					buf[i] ^= 0xA5
				}
			}
			if sent+int64(n) >= size {
				leave()
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil || sent >= size {
			return
		}
		if f.Throttle > 0 {
			t := time.NewTimer(f.Throttle)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.done:
				t.Stop()
				return
			}
		}
	}
}

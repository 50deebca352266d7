package httpsync

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// body is a response body read from its connection. Read to its end, it
// hands the connection back to the idle pool; closed before that, or after
// a failed read, it closes the connection.
type body struct {
	ctx  context.Context // the request's
	t    *Transport
	c    *conn
	br   *bufio.Reader
	rc   io.ReadCloser // net/http's framing (length or chunks) over br
	stop func() bool   // the context watch of the exchange
	keep bool          // the response and request allow another request

	mu   sync.Mutex
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.finish(true)
	case err != nil:
		b.finish(false)
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr // the context ended the read, not the host
		}
	}
	return n, err
}

// Close ends the exchange; a body not read to its end closes the
// connection, as what is left of it cannot be skipped cheaply.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.finish(false)
	}
	return nil
}

// finish gives the connection back (clean: the body was read to its end)
// or closes it, and returns the read buffer.
func (b *body) finish(clean bool) {
	b.done = true
	watched := b.stop() // false: the context ended and poisoned the deadline
	reuse := clean && watched && b.keep && b.br.Buffered() == 0
	b.br.Reset(nil)
	b.t.readers.Put(b.br)
	b.br = nil
	if reuse {
		b.t.idle.put(b.c)
		return
	}
	_ = b.c.nc.Close()
}

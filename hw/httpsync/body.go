package httpsync

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
)

// errBodyClosed is what a Read that Close cut short returns.
var errBodyClosed = errors.New("httpsync: read on a closed response body")

// body is a response body read from its connection. Read to its end, it
// hands the connection back to the idle pool; closed before that, or after
// a failed read, it closes the connection. Close may be called while a
// Read is blocked in another goroutine: it ends that read.
type body struct {
	ctx  context.Context // the request's
	t    *Transport
	c    *conn
	br   *bufio.Reader
	rc   io.ReadCloser // net/http's framing (length or chunks) over br
	stop func() bool   // the context watch of the exchange
	keep bool          // the response and request allow another request

	reading sync.Mutex // one Read at a time, and Close waits for it
	// state guards done and closing; it is never held across a blocking
	// read, so Close can take it while a Read waits for the host.
	state   sync.Mutex
	done    bool // the connection was handed back or closed
	closing bool // Close was called: no Read hands the connection back
}

func (b *body) Read(p []byte) (int, error) {
	b.reading.Lock()
	defer b.reading.Unlock()
	b.state.Lock()
	done, closing := b.done, b.closing
	b.state.Unlock()
	switch {
	case closing:
		return 0, errBodyClosed
	case done:
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == nil {
		return n, nil
	}
	b.state.Lock()
	defer b.state.Unlock()
	switch {
	case b.closing:
		b.finish(false)
		return n, errBodyClosed
	case err == io.EOF:
		b.finish(true)
	default:
		b.finish(false)
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr // the context ended the read, not the host
		}
	}
	return n, err
}

// Close ends the exchange; a body not read to its end closes the
// connection, as what is left of it cannot be skipped cheaply. A Read
// blocked in another goroutine ends with an error.
func (b *body) Close() error {
	b.state.Lock()
	if b.done || b.closing {
		b.state.Unlock()
		return nil
	}
	b.closing = true
	// The connection is still this body's (not done): end a blocked read.
	_ = b.c.nc.SetReadDeadline(aLongTimeAgo)
	b.state.Unlock()

	b.reading.Lock() // the blocked Read, if any, has returned
	defer b.reading.Unlock()
	b.state.Lock()
	defer b.state.Unlock()
	if !b.done {
		b.finish(false)
	}
	return nil
}

// finish gives the connection back (clean: the body was read to its end)
// or closes it, and returns the read buffer. The caller holds state.
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

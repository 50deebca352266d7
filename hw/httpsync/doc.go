// Package httpsync is an HTTP/1.1 transport for body-less GET requests to
// many hosts, each asked one thing at a time: the shape of a site-wide
// Redfish poll.
//
// net/http's Transport keeps two goroutines (a reader and a writer), two
// buffers and several channels for every pooled connection, and hands each
// request from the caller's goroutine to the writer and the response back
// from the reader. With a connection kept to each of thousands of BMCs,
// that is most of a client's memory and a third of its CPU per read. This
// transport does the exchange in the caller's goroutine instead: it writes
// the request and reads the response on the connection itself, with
// buffers borrowed for the exchange, and an idle connection is the TLS
// connection alone.
//
// It serves GET requests without a body only; callers route everything
// else (uploads, POST, PATCH) to net/http (Route). A request that fails on
// a reused connection before any byte of the response came back is sent
// once more on a new one, as net/http does: the host may have closed the
// connection while it was idle.
package httpsync

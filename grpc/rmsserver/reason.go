package rmsserver

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// Reasons of in-band failures. Many replies answer FAILURE without a
// message field (SetPowerState, GetPowerState), so the reason of every
// in-band failure travels in the ReasonTrailer response trailer, which
// upstream's clients ignore and rmsctl prints, and is logged once, at
// warn (a caller's repeats of it at debug: reasonrepeat.go), with its
// rack, node and, for a node or rack a job holds, the holder job. A handler records a failure with m.failed (or, for a batch,
// m.failedNodes); reasonUnary does the rest once the handler returned. A
// FAILURE reply whose handler recorded nothing is reported from the
// reply's own message.

// ReasonTrailer is the response trailer that carries the reason of an
// in-band failure: text without control characters, at most maxMessage
// bytes before encoding, percent-encoded as grpc-message is (every byte
// outside printable ASCII, and '%', as %XX).
const ReasonTrailer = "rms-reason"

// inBandFailure is one failure a handler recorded.
type inBandFailure struct {
	rack, node string
	err        error
	// logged is set when the member that served the call logged the
	// failure already (RecordLoggedReason).
	logged bool
}

// inBandFailures collects what the handlers of one RPC record. Batch
// handlers record from the goroutine the RPC runs on, but a mutex keeps
// any other recorder safe.
type inBandFailures struct {
	mu   sync.Mutex
	list []inBandFailure
}

func (f *inBandFailures) add(e inBandFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, e)
}

func (f *inBandFailures) take() []inBandFailure {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.list
	f.list = nil
	return out
}

type failuresKey struct{}

// withFailures returns ctx carrying a new, empty record of failures.
func withFailures(ctx context.Context) (context.Context, *inBandFailures) {
	f := &inBandFailures{}
	return context.WithValue(ctx, failuresKey{}, f), f
}

// failed records that the RPC running under ctx answers an in-band failure
// of node (rack, node) because of err. Called without the interceptor (a
// handler called directly), it logs the failure at once.
func (m *rackManager) failed(ctx context.Context, rack, node string, err error) {
	recordFailure(ctx, m.log, rack, node, err)
}

// failed is rackManager.failed for the v2 service.
func (m *rackManagerV2) failed(ctx context.Context, rack, node string, err error) {
	recordFailure(ctx, m.log, rack, node, err)
}

func recordFailure(ctx context.Context, log zerolog.Logger, rack, node string, err error) {
	if err == nil {
		return
	}
	e := inBandFailure{rack: rack, node: node, err: err}
	if f, ok := ctx.Value(failuresKey{}).(*inBandFailures); ok {
		f.add(e)
		return
	}
	logFailure(log, "", e)
}

// failedNodes records the failed nodes of a batch (results aligned with
// nodes).
func (m *rackManager) failedNodes(ctx context.Context, nodes []hw.Node, results []nodeResult) {
	for i, r := range results {
		if r.err != nil && i < len(nodes) {
			m.failed(ctx, nodes[i].RackID, nodes[i].ID, r.err)
		}
	}
}

// holderOf is the job holding the node or rack err refuses, "" when err
// is no refusal by a job's hold.
func holderOf(err error) string {
	var refused *messages.RefusedError
	if errors.As(err, &refused) {
		return refused.Holder
	}
	return ""
}

// logFailure logs one in-band failure at warn.
func logFailure(log zerolog.Logger, method string, e inBandFailure) {
	log.Warn().Func(failureFields(method, e)).Msg("request failed in-band")
}

// failureFields adds the fields of one in-band failure to a log event.
func failureFields(method string, e inBandFailure) func(*zerolog.Event) {
	return func(ev *zerolog.Event) {
		ev.Str("reason", clip(e.err.Error(), maxLogged))
		if method != "" {
			ev.Str("rpc", method)
		}
		if e.rack != "" {
			ev.Str("rack_id", clip(e.rack, maxEchoed))
		}
		if e.node != "" {
			ev.Str("node_id", clip(e.node, maxEchoed))
		}
		if h := holderOf(e.err); h != "" {
			ev.Str("holder_job", h)
		}
	}
}

// reasonText is the trailer's reason for failures of a request that
// named node (empty for a batch): one failure of that node is its error,
// more are "node_id: error" entries, summarised.
func reasonText(failures []inBandFailure, node string) string {
	if len(failures) == 1 && (failures[0].node == "" || failures[0].node == node) {
		return clip(failures[0].err.Error(), maxMessage)
	}
	entries := make([]string, len(failures))
	for i, f := range failures {
		entries[i] = f.err.Error()
		if f.node != "" {
			entries[i] = f.node + ": " + entries[i]
		}
	}
	return clip(summarise(entries, "; "), maxMessage)
}

// encodeReason makes reason safe to send as a trailer value: a line break
// becomes "; ", any other control or bidirectional formatting character
// (hw.UnsafeRune) a space, and what is left is percent-encoded.
func encodeReason(reason string) string {
	reason = strings.ToValidUTF8(reason, "\uFFFD")
	reason = strings.NewReplacer("\r\n", "; ", "\n", "; ").Replace(reason)
	reason = strings.Map(func(r rune) rune {
		if hw.UnsafeRune(r) {
			return ' '
		}
		return r
	}, reason)
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(reason); i++ {
		c := reason[i]
		if c < 0x20 || c > 0x7e || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

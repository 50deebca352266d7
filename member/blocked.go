package member

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
)

// blockProbe asks other members' remotes whether they have blocked this
// member's actor system. protoactor's remote answers every connect
// request with a ConnectResponse whose Blocked flag says whether the
// asking system is on the answering member's block list, which only ever
// grows: a member that has seen this one leave (its provider dropped it,
// or it left gracefully) has blocked it for good. protoactor's own
// sender ignores that flag; the probe reads it. Each peer gets one
// stream, kept open and asked again at every check, so that the peer
// logs nothing per question; a peer that leaves (it sends a disconnect
// request) or stops answering has its stream closed at once.
type blockProbe struct {
	self string // this member's actor system id
	addr string // this member's remote address
	dial []grpc.DialOption

	mu    sync.Mutex
	links map[string]*peerLink // by peer address
}

// peerLink is an open stream to one peer's remote and the goroutine that
// reads it.
type peerLink struct {
	conn    *grpc.ClientConn
	stream  remote.Remoting_ReceiveClient
	cancel  context.CancelFunc
	answers chan *remote.ConnectResponse
	// done is closed when the reader has ended, err saying why.
	done chan struct{}
	err  error
}

func newBlockProbe(self, addr string, dial []grpc.DialOption) *blockProbe {
	return &blockProbe{self: self, addr: addr, dial: dial, links: map[string]*peerLink{}}
}

// answer is a peer's reply to one question.
type answer struct {
	blocked bool
	peer    string // the peer's actor system id
	err     error
}

// ask asks the remote at addr whether it has blocked this member, within
// ctx. An error means no answer, which says nothing about blocking (the
// peer may be down, leaving or slow). One question at a time per peer.
func (p *blockProbe) ask(ctx context.Context, addr string) answer {
	l, err := p.link(ctx, addr)
	if err != nil {
		return answer{err: err}
	}
	select { // an answer to an earlier question given up
	case <-l.answers:
	default:
	}
	err = l.stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectRequest{
		ConnectRequest: &remote.ConnectRequest{ConnectionType: &remote.ConnectRequest_ServerConnection{
			ServerConnection: &remote.ServerConnection{SystemId: p.self, Address: p.addr},
		}},
	}})
	if err != nil {
		p.drop(addr, l)
		return answer{err: fmt.Errorf("member: ask %s: %w", addr, err)}
	}
	select {
	case cr := <-l.answers:
		return answer{blocked: cr.GetBlocked(), peer: cr.GetMemberId()}
	case <-l.done:
		p.drop(addr, l)
		return answer{err: fmt.Errorf("member: ask %s: %w", addr, l.err)}
	case <-ctx.Done():
		p.drop(addr, l)
		return answer{err: fmt.Errorf("member: no answer from %s: %w", addr, ctx.Err())}
	}
}

// link returns the open link to addr, opening one within ctx if there is
// none or the last one has ended.
func (p *blockProbe) link(ctx context.Context, addr string) (*peerLink, error) {
	p.mu.Lock()
	l := p.links[addr]
	p.mu.Unlock()
	if l != nil {
		select {
		case <-l.done:
			p.drop(addr, l)
		default:
			return l, nil
		}
	}
	conn, err := grpc.NewClient(addr, p.dial...)
	if err != nil {
		return nil, fmt.Errorf("member: dial %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	stream, err := remote.NewRemotingClient(conn).Receive(sctx)
	if !stop() || err != nil {
		cancel()
		_ = conn.Close()
		return nil, fmt.Errorf("member: open a stream to %s: %w", addr, errors.Join(err, ctx.Err()))
	}
	l = &peerLink{conn: conn, stream: stream, cancel: cancel, answers: make(chan *remote.ConnectResponse, 1), done: make(chan struct{})}
	go l.read()
	p.mu.Lock()
	p.links[addr] = l
	p.mu.Unlock()
	return l, nil
}

// read passes the peer's connect responses on until the stream ends or
// the peer sends anything else (a disconnect request: it is leaving),
// and then closes the stream.
func (l *peerLink) read() {
	defer close(l.done)
	defer l.cancel()
	for {
		msg, err := l.stream.Recv()
		if err != nil {
			l.err = err
			return
		}
		cr := msg.GetConnectResponse()
		if cr == nil {
			l.err = fmt.Errorf("the peer sent %T: it is leaving", msg.GetMessageType())
			return
		}
		select {
		case l.answers <- cr:
		default:
		}
	}
}

// close ends the stream and its reader and closes the connection.
func (l *peerLink) close() {
	l.cancel()
	<-l.done
	_ = l.conn.Close()
}

// drop closes l and forgets it, if it is still addr's link.
func (p *blockProbe) drop(addr string, l *peerLink) {
	p.mu.Lock()
	if p.links[addr] == l {
		delete(p.links, addr)
	}
	p.mu.Unlock()
	l.close()
}

// keepOnly closes the links to peers not in addrs (members that left).
func (p *blockProbe) keepOnly(addrs map[string]bool) {
	p.mu.Lock()
	var gone []*peerLink
	for a, l := range p.links {
		if !addrs[a] {
			gone = append(gone, l)
			delete(p.links, a)
		}
	}
	p.mu.Unlock()
	for _, l := range gone {
		l.close()
	}
}

// close closes every link.
func (p *blockProbe) close() { p.keepOnly(nil) }

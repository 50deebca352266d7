package member

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// startRemote starts an actor system with protoactor's remote on a
// loopback port of its own. One per test process at a time: protoactor's
// remote replaces gRPC's global logger at start, racing with another
// remote's server (Known upstream issue, docs/cluster.md). It stops
// gracefully: gRPC then waits for its handlers to end, which a later
// test's remote must not race with when it replaces the logger they use.
func startRemote(t *testing.T) (*actor.ActorSystem, *remote.Remote) {
	t.Helper()
	sys := actor.NewActorSystem()
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0))
	r.Start()
	t.Cleanup(func() { r.Shutdown(true); sys.Shutdown() })
	return sys, r
}

var probeDial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}

// TestProbeReadsThePeersBlockList: a peer's remote answers the probe
// whether it has blocked the asking actor system, also on the stream
// opened before the block (the stalled member's case); another system
// the peer has not blocked is told so; a peer that is gone or does not
// answer gives no answer, not a block.
func TestProbeReadsThePeersBlockList(t *testing.T) {
	// The asking members need no remote of their own to ask.
	const self, selfAddr, other = "self-system", "127.0.0.1:1", "other-system"
	// The probes close after the peer's remote has stopped (cleanups run
	// last first): protoactor's remote, stopping gracefully, sends on the
	// channel of every stream it still lists, and a stream that has just
	// ended closes its channel before it leaves that list, a race the
	// detector reports and a send that panics. Streams still open when it
	// stops are told to leave, and do.
	p := newBlockProbe(self, selfAddr, probeDial)
	t.Cleanup(p.close)
	fresh := newBlockProbe(self, selfAddr, probeDial)
	t.Cleanup(fresh.close)
	o := newBlockProbe(other, "127.0.0.1:2", probeDial)
	t.Cleanup(o.close)
	peer, peerRemote := startRemote(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	a := p.ask(ctx, peer.Address())
	if a.err != nil || a.blocked || a.peer != peer.ID {
		t.Fatalf("before any block: %+v, want not blocked by %s", a, peer.ID)
	}
	peerRemote.BlockList().Block(self)
	a = p.ask(ctx, peer.Address())
	if a.err != nil || !a.blocked || a.peer != peer.ID {
		t.Fatalf("after the peer blocked this system, on the same stream: %+v, want blocked by %s", a, peer.ID)
	}
	if a := fresh.ask(ctx, peer.Address()); a.err != nil || !a.blocked {
		t.Fatalf("after the peer blocked this system, on a new stream: %+v, want blocked", a)
	}
	if a := o.ask(ctx, peer.Address()); a.err != nil || a.blocked {
		t.Fatalf("a system the peer has not blocked: %+v, want not blocked", a)
	}

	// A peer that is gone: no answer, within the question's deadline.
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := gone.Addr().String()
	gone.Close()
	qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
	if a := p.ask(qctx, addr); a.err == nil || a.blocked {
		t.Fatalf("a peer that is gone: %+v, want no answer", a)
	}
	qcancel()
	// A peer that accepts the connection but never answers (a stalled
	// process): no answer once the question's deadline passes.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	qctx, qcancel = context.WithTimeout(ctx, time.Second)
	if a := p.ask(qctx, mute.Addr().String()); a.err == nil || a.blocked {
		t.Fatalf("a peer that never answers: %+v, want no answer", a)
	}
	qcancel()
	mute.Close()
	for c := range accepted {
		c.Close()
	}
}

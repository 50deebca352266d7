package rmsserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// pingOutcome is what a raw HTTP/2 client saw while pinging with no stream open.
type pingOutcome struct {
	acks   int
	goAway *http2.GoAwayFrame
}

// pingIdle opens a prior-knowledge HTTP/2 connection to addr, opens no
// stream, and sends a PING every interval, count times, the way the upstream
// client keeps idle connections alive. It reports the ACKs received and any
// GOAWAY.
func pingIdle(t *testing.T, addr string, interval time.Duration, count int) pingOutcome {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	framer := http2.NewFramer(conn, bufio.NewReader(conn))
	var writeMu sync.Mutex // the reader answers SETTINGS while the test pings
	if err := framer.WriteSettings(); err != nil {
		t.Fatal(err)
	}

	frames := make(chan http2.Frame, 16)
	readErr := make(chan error, 1)
	go func() {
		for {
			f, err := framer.ReadFrame()
			if err != nil {
				readErr <- err
				close(frames)
				return
			}
			if ping, ok := f.(*http2.PingFrame); ok {
				if !ping.IsAck() {
					// A server keepalive probe: answer it as a real client would.
					writeMu.Lock()
					_ = framer.WritePing(true, ping.Data)
					writeMu.Unlock()
					continue
				}
				frames <- &http2.PingFrame{FrameHeader: ping.FrameHeader, Data: ping.Data}
				continue
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				frames <- &http2.GoAwayFrame{FrameHeader: g.FrameHeader, ErrCode: g.ErrCode, LastStreamID: g.LastStreamID}
				continue
			}
			if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
				writeMu.Lock()
				_ = framer.WriteSettingsAck()
				writeMu.Unlock()
			}
		}
	}()

	var out pingOutcome
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for sent := 0; sent < count; sent++ {
		writeMu.Lock()
		err := framer.WritePing(false, [8]byte{byte(sent)})
		writeMu.Unlock()
		if err != nil {
			break // the server closed the connection after a GOAWAY
		}
		// Collect the answer to this ping (or a GOAWAY) before the next tick.
		deadline := time.After(5 * time.Second)
	wait:
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					return out
				}
				switch f := f.(type) {
				case *http2.PingFrame:
					out.acks++
					break wait
				case *http2.GoAwayFrame:
					out.goAway = f
					return out
				}
			case <-deadline:
				t.Fatalf("no PING ACK within 5s for ping %d", sent)
			}
		}
		<-ticker.C
	}
	_ = conn.Close()
	for range frames {
	}
	if err := <-readErr; err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
		t.Logf("reader ended: %v", err)
	}
	return out
}

// TestIdleClientPingingAtUpstreamRateStaysConnected scales the upstream
// client's 10 s ping interval down to 100 ms and applies the same policy
// arithmetic: the connection must survive pings with no stream open.
func TestIdleClientPingingAtUpstreamRateStaysConnected(t *testing.T) {
	const interval = 100 * time.Millisecond
	ts := startServer(t, Options{Logger: zerolog.Nop(), Keepalive: KeepalivePolicy{ClientPingInterval: interval}})
	got := pingIdle(t, ts.addr, interval, 8)
	if got.goAway != nil {
		t.Fatalf("server sent GOAWAY %v after %d pings", got.goAway.ErrCode, got.acks)
	}
	if got.acks != 8 {
		t.Fatalf("got %d PING ACKs, want 8", got.acks)
	}
}

// TestDefaultGRPCEnforcementWouldDropTheClient is the control for the test
// above: with grpc-go's default enforcement the same client is sent GOAWAY
// ENHANCE_YOUR_CALM (too_many_pings).
func TestDefaultGRPCEnforcementWouldDropTheClient(t *testing.T) {
	const interval = 100 * time.Millisecond
	policy := keepalive.EnforcementPolicy{MinTime: 5 * time.Minute}
	if got := (KeepalivePolicy{ClientPingInterval: interval}).Enforcement(); got == policy {
		t.Fatal("the policy under test equals grpc-go's default")
	}
	plain := startBareServer(t, grpc.KeepaliveEnforcementPolicy(policy))
	got := pingIdle(t, plain, interval, 8)
	if got.goAway == nil || got.goAway.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("want GOAWAY ENHANCE_YOUR_CALM from default enforcement, got %+v", got)
	}
}

// startBareServer serves a grpc.Server with only opts (no RMS policy) on
// loopback until the test ends, and returns its address.
func startBareServer(t *testing.T, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	done := make(chan struct{})
	go func() {
		_ = s.Serve(lis)
		close(done)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return lis.Addr().String()
}

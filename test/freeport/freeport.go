// Package freeport hands tests TCP ports to bind later: ports free on
// every interface and below the kernel's ephemeral range, so that no
// outgoing connection of another test takes one between the choice and
// the bind (a port the kernel handed out with net.Listen(":0") is in that
// range, and was taken so under load). It is for tests only.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// First and Last bound the ports handed out: below Linux's default
// ephemeral range (net.ipv4.ip_local_port_range, 32768–60999).
const (
	First = 20000
	Last  = 32000
)

// Ports returns n distinct ports that were free on every interface at the
// time of the call.
func Ports(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("freeport: no %d free ports in %d–%d", n, First, Last)
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", First+rand.IntN(Last-First)))
		if err != nil {
			continue
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Port is one port of Ports, failing t when there is none.
func Port(t testing.TB) int {
	t.Helper()
	ports, err := Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

package hw

import (
	"net"
	"strconv"
)

// Endpoint is where a management interface of a node listens, and how to log
// in to it.
type Endpoint struct {
	IP          string // IP address, or empty when only HostName is known
	MAC         string
	HostName    string
	Port        int // 0 means the protocol's default port
	Credentials Credentials
}

// Host returns the address to dial: the IP when set, else the host name.
func (e Endpoint) Host() string {
	if e.IP != "" {
		return e.IP
	}
	return e.HostName
}

// Addr returns host:port, using defaultPort when the endpoint has none.
func (e Endpoint) Addr(defaultPort int) string {
	p := e.Port
	if p == 0 {
		p = defaultPort
	}
	return net.JoinHostPort(e.Host(), strconv.Itoa(p))
}

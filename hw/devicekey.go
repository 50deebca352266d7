package hw

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ResolveTimeout bounds the name look-up of one endpoint's canonical key:
// a name that does not resolve in time is keyed by its spelling.
const ResolveTimeout = 2 * time.Second

// DefaultBMCPort is the Redfish port a BMC endpoint without a port is
// dialled on (redfish.DefaultPort; hw cannot import it).
const DefaultBMCPort = 443

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CanonicalAddr returns the device identity of an address: an IP literal
// as the address it is (an IPv4-mapped IPv6 address as its IPv4 form), a
// host name as the lowest of the addresses r resolves it to within
// ResolveTimeout, or, when it does not resolve, the name itself lower-cased
// without its trailing dot. Two spellings of one device give one key as
// far as the resolver can tell; "" stays "".
func CanonicalAddr(ctx context.Context, r Resolver, host string) string {
	if host == "" {
		return ""
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().WithZone("").String()
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if r == nil {
		return name
	}
	lctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", name)
	if err != nil || len(addrs) == 0 {
		return name
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap().WithZone("")
	}
	return slices.MinFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) }).String()
}

// BMCKey returns the canonical key of a BMC endpoint: "bmc " and its
// canonical address and port (DefaultBMCPort when it has none). It is ""
// when the endpoint is nil or has no address.
func BMCKey(ctx context.Context, r Resolver, ep *Endpoint) string {
	if ep == nil || ep.Host() == "" {
		return ""
	}
	port := ep.Port
	if port == 0 {
		port = DefaultBMCPort
	}
	return "bmc " + net.JoinHostPort(CanonicalAddr(ctx, r, ep.Host()), strconv.Itoa(port))
}

// HostKey returns the canonical key of a switch's host endpoint: "host "
// and its canonical address. The port is left out on purpose: one NVOS
// host serves NVUE, SSH and SFTP on different ports of the same address,
// and callers send any of them (or none), yet it is one device.
func HostKey(ctx context.Context, r Resolver, ep *Endpoint) string {
	if ep == nil || ep.Host() == "" {
		return ""
	}
	return "host " + CanonicalAddr(ctx, r, ep.Host())
}

// DeviceKeys returns the canonical keys of the devices a node's work
// drives: its BMC and its switch host, those it has. Exclusion is keyed by
// them besides (rack, node), so a device registered or sent under two
// names is still one device.
func (n Node) DeviceKeys(ctx context.Context, r Resolver) []string {
	var keys []string
	for _, k := range []string{BMCKey(ctx, r, n.BMC), HostKey(ctx, r, n.Host)} {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// resolveParallel is how many nodes' keys DeviceKeysOf resolves at once.
const resolveParallel = 16

// DeviceKeysOf returns the DeviceKeys of every node, in order, resolving
// up to resolveParallel nodes at once: a batch of host names that do not
// resolve costs a few ResolveTimeouts, not one per node. It returns once
// every look-up has ended.
func DeviceKeysOf(ctx context.Context, r Resolver, nodes []Node) [][]string {
	out := make([][]string, len(nodes))
	sem := make(chan struct{}, resolveParallel)
	var wg sync.WaitGroup
	for i := range nodes {
		if !nodes[i].needsLookUp() {
			out[i] = nodes[i].DeviceKeys(ctx, r)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = nodes[i].DeviceKeys(ctx, r)
		}()
	}
	wg.Wait()
	return out
}

// needsLookUp reports whether a node's keys need a name look-up.
func (n Node) needsLookUp() bool {
	for _, ep := range []*Endpoint{n.BMC, n.Host} {
		if ep == nil || ep.Host() == "" {
			continue
		}
		if _, err := netip.ParseAddr(ep.Host()); err != nil {
			return true
		}
	}
	return false
}

package hw

import (
	"fmt"
	"net/netip"
	"strings"
)

// maxHostNameLength is the longest DNS name (RFC 1035 §2.3.4), without the
// trailing dot.
const maxHostNameLength = 253

// CheckAddress says whether s can be dialled as given: an IPv4 or IPv6
// address, or a host name (RFC 1123: dot-separated labels of letters,
// digits and inner hyphens, each at most 63 characters, 253 in all; one
// trailing dot allowed). It never resolves anything. The error quotes at
// most the start of s.
func CheckAddress(s string) error {
	if _, err := netip.ParseAddr(s); err == nil {
		return nil
	}
	if validHostName(s) {
		return nil
	}
	return fmt.Errorf("%s is neither an IP address nor a valid host name", QuoteShort(s))
}

func validHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > maxHostNameLength {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// AddressProblem checks the address fields of an endpoint: a non-empty IP
// or host name must be dialable as given (see CheckAddress). It returns ""
// when they are, else what is wrong, naming the field.
func (e Endpoint) AddressProblem() string {
	if e.IP != "" {
		if err := CheckAddress(e.IP); err != nil {
			return "ip_address " + err.Error()
		}
	}
	if e.HostName != "" {
		if err := CheckAddress(e.HostName); err != nil {
			return "host_name " + err.Error()
		}
	}
	return ""
}

package authz

import (
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/callerid"
)

// Denied is a refused call: the group (and rack) the caller's roles do not
// grant. Its gRPC status is PERMISSION_DENIED with Error as the message.
type Denied struct {
	Caller callerid.Identity
	// Method is set for an RPC that is in no group.
	Method string
	Group  Group
	// Rack is the rack the roles granting Group do not cover; SiteWide when
	// it is the request's reach beyond named racks. Both empty: no role of
	// the caller grants Group at all.
	Rack     string
	SiteWide bool
}

// Error names the missing permission and the caller, never a credential
// (the identity holds names from the certificate only).
func (d *Denied) Error() string {
	caller := d.Caller.String()
	if !d.Caller.Verified {
		caller += " (no verified client certificate)"
	}
	switch {
	case d.Method != "":
		return fmt.Sprintf("rpc %s is in no permission group: denied to %s", d.Method, caller)
	case d.SiteWide:
		return fmt.Sprintf("permission %q on all racks (the request is not limited to named racks) is not granted to %s", d.Group, caller)
	case d.Rack != "":
		return fmt.Sprintf("permission %q on rack %s is not granted to %s", d.Group, strconv.Quote(clip(d.Rack)), caller)
	default:
		return fmt.Sprintf("permission %q is not granted to %s", d.Group, caller)
	}
}

// GRPCStatus makes the error a PERMISSION_DENIED status.
func (d *Denied) GRPCStatus() *status.Status {
	return status.New(codes.PermissionDenied, d.Error())
}

// maxRack bounds the rack id a denial echoes: the request is not validated
// yet when authorization refuses it.
const maxRack = 128

func clip(s string) string {
	if len(s) <= maxRack {
		return s
	}
	return s[:maxRack] + "..."
}

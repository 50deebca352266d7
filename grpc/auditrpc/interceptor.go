package auditrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"github.com/rmsd/rmsd/store"
)

// Outcomes besides the gRPC code names.
const (
	OutcomeOK      = "OK"
	OutcomeFailure = "FAILURE"
)

// maxReason bounds the reason a record keeps, in bytes.
const maxReason = 1024

// Recorder takes the records (*audit.Recorder).
type Recorder interface {
	Record(rec store.AuditRecord)
}

// Unary records every call whose full method audited accepts, and every
// other call that is refused PERMISSION_DENIED, once the
// handler (and every interceptor inside this one, such as authorization)
// has answered: outcome OK, FAILURE with the in-band reason, or the gRPC
// code and message of an error, a refusal by an inner interceptor
// included. Install it outside authorization so denials are recorded.
func Unary(rec Recorder, audited func(fullMethod string) bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if !audited(info.FullMethod) {
			// A read is recorded only when it is refused: who tried to
			// read what they may not is worth keeping.
			resp, err := handler(ctx, req)
			if st, ok := status.FromError(err); ok && st.Code() == codes.PermissionDenied {
				r := store.AuditRecord{Method: info.FullMethod, Outcome: codeName(st.Code()), Reason: clip(st.Message())}
				setCaller(&r, callerid.FromContext(ctx))
				r.RackIDs, r.NodeIDs = rpcfields.Targets(req)
				rec.Record(r)
			}
			return resp, err
		}
		r := store.AuditRecord{Method: info.FullMethod}
		setCaller(&r, callerid.FromContext(ctx))
		r.RackIDs, r.NodeIDs = rpcfields.Targets(req)
		hctx, reason := rpcfields.WithReason(ctx)
		resp, err := handler(hctx, req)
		switch {
		case err != nil:
			st := status.Convert(err)
			r.Outcome, r.Reason = codeName(st.Code()), st.Message()
		default:
			r.JobIDs = rpcfields.JobIDs(resp)
			r.Outcome = OutcomeOK
			if msg, failed := rpcfields.Failure(resp); failed {
				r.Outcome, r.Reason = OutcomeFailure, reason.Text()
				if r.Reason == "" {
					r.Reason = msg
				}
			}
		}
		r.Reason = clip(r.Reason)
		rec.Record(r)
		return resp, err
	}
}

// All audits every method (the admin service).
func All(string) bool { return true }

func setCaller(r *store.AuditRecord, id callerid.Identity) {
	r.Caller = id.String()
	r.CallerVerified, r.CallerAddr = id.Verified, id.Addr
	if id.Verified {
		r.CallerSubject, r.CallerCN = id.Subject, id.CommonName
		r.CallerOU, r.CallerDNS, r.CallerURIs = id.OrganizationalUnit, id.DNSNames, id.URIs
	}
}

// clip cuts s to maxReason bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

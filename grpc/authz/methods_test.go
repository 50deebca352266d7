package authz_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// servedFiles are the descriptors of every service rmsd serves whose RPCs
// need a permission.
var servedFiles = []protoreflect.FileDescriptor{
	rmspb.File_rack_manager_rack_manager_proto,
	rmspbv2.File_rack_manager_v2_rack_manager_v2_proto,
	adminpb.File_rmsd_admin_admin_proto,
	opspb.File_rmsd_ops_ops_proto,
}

// TestEveryRPCHasOneGroup walks the services' descriptors: an RPC added to
// a proto without a group in the table fails here, and so does a table
// entry naming no RPC.
func TestEveryRPCHasOneGroup(t *testing.T) {
	served := map[string]bool{}
	rms := 0
	for _, f := range servedFiles {
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				full := "/" + string(s.FullName()) + "/" + string(s.Methods().Get(j).Name())
				served[full] = true
				if !strings.HasPrefix(full, "/rmsd_admin.") && !strings.HasPrefix(full, "/rmsd_ops.") {
					rms++
				}
				g, ok := authz.GroupOf(full)
				if !ok {
					t.Errorf("%s is in no permission group (grpc/authz/methods.go)", full)
					continue
				}
				if !slices.Contains(authz.Groups, g) {
					t.Errorf("%s: group %q is not a known group", full, g)
				}
				if authz.Open(full) {
					t.Errorf("%s must not be open to every caller", full)
				}
			}
		}
	}
	if rms != 54 {
		t.Errorf("RackManager and RackManagerV2 serve %d RPCs, the table was written for 54", rms)
	}
	listed := 0
	for _, g := range authz.Groups {
		for _, m := range authz.MethodsOf(g) {
			listed++
			found := false
			for full := range served {
				if strings.HasSuffix(full, "."+m) {
					found = true
				}
			}
			if !found {
				t.Errorf("the table maps %s, which no service serves", m)
			}
		}
	}
	if listed != len(served) {
		t.Errorf("the table lists %d RPCs, the services serve %d", listed, len(served))
	}
}

// TestUnknownAndOpenServices: health and reflection are open; an RPC of
// a service the table does not know has no group (authorization denies
// it).
func TestUnknownAndOpenServices(t *testing.T) {
	for _, m := range []string{"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"} {
		if !authz.Open(m) {
			t.Errorf("%s must be open", m)
		}
	}
	for _, m := range []string{"/rmsd_future.Service/List", "/rack_manager.RackManager/NoSuchRPC", "garbage", ""} {
		if authz.Open(m) {
			t.Errorf("%s must not be open", m)
		}
		if g, ok := authz.GroupOf(m); ok {
			t.Errorf("%s has group %q", m, g)
		}
	}
}

// TestGroupsAreTheConfigGroups: the groups [authz] validates are the
// groups the table uses.
func TestGroupsAreTheConfigGroups(t *testing.T) {
	var names []string
	for _, g := range authz.Groups {
		names = append(names, string(g))
	}
	if !slices.Equal(names, config.AuthzGroups) {
		t.Fatalf("authz.Groups %v, config.AuthzGroups %v", names, config.AuthzGroups)
	}
}

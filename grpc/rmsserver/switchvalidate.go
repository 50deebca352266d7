package rmsserver

import (
	"net"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// Request-wide validation of the switch RPCs that upstream refuses with a
// gRPC status before any job exists (ConfigureSwitchCertificate,
// BatchDisableSwitchMtls, UpdateSwitchSystemPassword, SPDM evidence).
// NICo's component manager reads INVALID_ARGUMENT as "rejected before
// dispatch" and a reply without a job id as "outcome unknown"
// (rms_ensure_switch_password_rotation), so a request that cannot start is
// refused here, never answered in-band.

// errNoSwitchNodes is upstream's refusal of a switch batch naming no node.
var errNoSwitchNodes = status.Error(codes.InvalidArgument, "nodes is required and must contain at least one device")

// invalidArgument is INVALID_ARGUMENT with err's text, clipped.
func invalidArgument(err error) error {
	return status.Error(codes.InvalidArgument, clip(err.Error(), maxMessage))
}

// failedPrecondition is FAILED_PRECONDITION with err's text, clipped.
func failedPrecondition(err error) error {
	return status.Error(codes.FailedPrecondition, clip(err.Error(), maxMessage))
}

// switchRequestNodes decodes the nodes of a switch request refused as a
// whole when it names none (INVALID_ARGUMENT), or when the server cannot
// start its jobs (UNAVAILABLE).
func (m *rackManager) switchRequestNodes(set *rmspb.NodeSet, what string) ([]hw.Node, error) {
	if len(set.GetNodes()) == 0 {
		return nil, errNoSwitchNodes
	}
	nodes, err := m.deps.nodesFromProto(set)
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable(what)
	}
	return nodes, nil
}

// duplicateSwitchTarget refuses a request naming one switch (rack_id and
// node_id) twice, as upstream's validate_unique_switch_password_targets.
func duplicateSwitchTarget(nodes []hw.Node) error {
	seen := make(map[hw.Ref]bool, len(nodes))
	for _, n := range nodes {
		if seen[n.Ref()] {
			return status.Errorf(codes.InvalidArgument, "duplicate switch target in request: rack_id=%s node_id=%s",
				clip(n.RackID, maxEchoed), clip(n.ID, maxEchoed))
		}
		seen[n.Ref()] = true
	}
	return nil
}

// duplicateAttestationTarget refuses an SPDM request naming one node id
// twice (whatever the racks) or two targets at one management address: the
// evidence read there could not be told apart (upstream's
// validate_attestation_targets).
func duplicateAttestationTarget(nodes []hw.Node) error {
	ids := make(map[string]bool, len(nodes))
	addrs := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		id := strings.TrimSpace(n.ID)
		if ids[id] {
			return status.Errorf(codes.InvalidArgument, "duplicate switch target in request: node_id=%s", clip(n.ID, maxEchoed))
		}
		ids[id] = true
		key := spdmAddress(n)
		if key == "" {
			continue
		}
		if addrs[key] {
			return status.Errorf(codes.InvalidArgument, "duplicate physical switch target in request: host_ip=%s", clip(key, maxEchoed))
		}
		addrs[key] = true
	}
	return nil
}

// spdmAddress is the canonical management address of a switch (an IP in
// its canonical form, else the host name in lower case), or "" (upstream's
// canonical_switch_key).
func spdmAddress(n hw.Node) string {
	if n.Host == nil {
		return ""
	}
	a := strings.TrimSpace(n.Host.Host())
	a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if ip := net.ParseIP(a); ip != nil {
		return ip.String()
	}
	return strings.ToLower(a)
}

// helloServices are the services a test_hello can greet: NVUE's API, the
// fabric manager (NMX-C) and the telemetry interface (gNMI).
var helloServices = map[rmspb.SwitchService]bool{
	rmspb.SwitchService_SWITCH_SERVICE_NVUE_API:                            true,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER:             true,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE: true,
}

// testHelloProblem refuses test_hello when no requested service can be
// greeted (upstream's validate_test_hello_services).
func testHelloProblem(testHello bool, services []rmspb.SwitchService) error {
	if !testHello {
		return nil
	}
	for _, s := range services {
		if helloServices[s] {
			return nil
		}
	}
	return status.Error(codes.InvalidArgument, "test_hello requires SWITCH_SERVICE_NVUE_API, SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER "+
		"and/or SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE in services")
}

// switchServicesArg is switchServices refused with INVALID_ARGUMENT
// (upstream's parse_switch_services).
func switchServicesArg(in []rmspb.SwitchService) ([]string, error) {
	out, err := switchServices(in)
	if err != nil {
		return nil, invalidArgument(err)
	}
	return out, nil
}

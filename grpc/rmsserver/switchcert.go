package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/switchcert"
	"github.com/rmsd/rmsd/messages"
)

// The switch mTLS RPCs (southbound §3.11). Both start a switch batch: a
// parent and one child per switch, held for the child's life.

// switchServiceNames maps the request enum to the services' names.
var switchServiceNames = map[rmspb.SwitchService]string{
	rmspb.SwitchService_SWITCH_SERVICE_NVUE_API:                            switchcert.ServiceNVUEAPI,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY:           switchcert.ServiceFabricTelemetry,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER:             switchcert.ServiceFabricManager,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE: switchcert.ServiceTelemetryInterface,
}

// switchServices names the requested services once each, in request
// order; none, UNSPECIFIED or an undefined value is refused, in upstream's
// words (parse_switch_services).
func switchServices(in []rmspb.SwitchService) ([]string, error) {
	if len(in) == 0 {
		return nil, errors.New("services must contain at least one SwitchService")
	}
	var out []string
	seen := map[rmspb.SwitchService]bool{}
	for _, s := range in {
		name, ok := switchServiceNames[s]
		switch {
		case s == rmspb.SwitchService_SWITCH_SERVICE_UNSPECIFIED:
			return nil, errors.New("services must not include SWITCH_SERVICE_UNSPECIFIED")
		case !ok:
			return nil, fmt.Errorf("invalid SwitchService value: %d", int32(s))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// ConfigureSwitchCertificate installs the domain's material from
// switch_cert_root on each switch and binds the requested services to it;
// with insecure_switch it moves them back to plain TLS instead. Follow the
// jobs with GetConfigureSwitchCertificateJobStatus. A request that cannot
// start is refused before any job, in upstream's order
// (handle_configure_switch_certificate): the domain (FAILED_PRECONDITION),
// the services and test_hello (INVALID_ARGUMENT), the material
// (FAILED_PRECONDITION), then the nodes (INVALID_ARGUMENT).
func (m *rackManager) ConfigureSwitchCertificate(ctx context.Context, req *rmspb.ConfigureSwitchCertificateRequest) (*rmspb.ConfigureSwitchCertificateResponse, error) {
	if err := checkIDs(idField{"domain", req.GetDomain()}); err != nil {
		return nil, err
	}
	cfg := m.deps.SwitchCert
	domain := switchcert.EffectiveDomain(req.GetDomain(), cfg.DefaultDomain)
	if !cfg.Insecure {
		if err := switchcert.CheckDomain(domain); err != nil {
			m.log.Warn().Str("operation", "ConfigureSwitchCertificate").Err(loggedErr(err)).Msg("switch certificate domain unresolved")
			return nil, failedPrecondition(err)
		}
	}
	services, err := switchServicesArg(req.GetServices())
	if err != nil {
		return nil, err
	}
	deps := cfg.Pacing
	deps.Nodes, deps.Fabric = m.deps.Nodes, m.deps.Fabric
	var workflow func(n hw.Node) messages.Workflow
	if cfg.Insecure {
		// Upstream ignores test_hello here: the request becomes an unset.
		workflow = func(n hw.Node) messages.Workflow {
			return switchcert.DisablePlan{Node: n, Services: services}.Workflow(deps)
		}
	} else {
		if err := testHelloProblem(req.GetTestHello(), req.GetServices()); err != nil {
			return nil, err
		}
		material, err := switchcert.LoadMaterial(cfg.CertRoot, domain)
		if err != nil {
			m.log.Warn().Str("operation", "ConfigureSwitchCertificate").Err(loggedErr(err)).Msg("switch certificate material unavailable")
			return nil, failedPrecondition(err)
		}
		hello := req.GetTestHello()
		workflow = func(n hw.Node) messages.Workflow {
			return switchcert.ConfigurePlan{Node: n, Services: services, Material: material, TestHello: hello}.Workflow(deps)
		}
	}
	nodes, err := m.switchRequestNodes(req.GetNodes(), "switch certificate install")
	if err != nil {
		return nil, err
	}
	resp, children, err := m.admitSwitchBatch(ctx, switchBatch{operation: "ConfigureSwitchCertificate", jobType: messages.TypeSwitchCertificate,
		nodes: nodes, workflow: workflow})
	if err != nil {
		return nil, err
	}
	out := &rmspb.ConfigureSwitchCertificateResponse{Response: resp}
	for _, c := range children {
		out.Jobs = append(out.Jobs, &rmspb.ConfigureSwitchCertificateJobInfo{NodeId: c.nodeID, JobId: c.jobID})
	}
	return out, nil
}

// BatchDisableSwitchMtls moves the requested services on each switch back
// to plain TLS over the NVOS CLI; it needs no material. Bad services or no
// node are INVALID_ARGUMENT before any job (upstream's
// handle_batch_disable_switch_mtls).
func (m *rackManager) BatchDisableSwitchMtls(ctx context.Context, req *rmspb.BatchDisableSwitchMtlsRequest) (*rmspb.BatchDisableSwitchMtlsResponse, error) {
	services, err := switchServicesArg(req.GetServices())
	if err != nil {
		return nil, err
	}
	nodes, err := m.switchRequestNodes(req.GetNodes(), "switch mTLS disable")
	if err != nil {
		return nil, err
	}
	deps := m.deps.SwitchCert.Pacing
	deps.Nodes = m.deps.Nodes
	resp, err := m.startSwitchBatch(ctx, switchBatch{operation: "BatchDisableSwitchMtls", jobType: messages.TypeSwitchMtlsDisable, nodes: nodes,
		workflow: func(n hw.Node) messages.Workflow {
			return switchcert.DisablePlan{Node: n, Services: services}.Workflow(deps)
		}})
	return &rmspb.BatchDisableSwitchMtlsResponse{Response: resp}, err
}

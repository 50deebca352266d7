package rmsserver

import (
	"context"
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
// order; none, UNSPECIFIED or an undefined value is refused.
func switchServices(in []rmspb.SwitchService) ([]string, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("services is required (at least one SwitchService)")
	}
	var out []string
	seen := map[rmspb.SwitchService]bool{}
	for _, s := range in {
		name, ok := switchServiceNames[s]
		if !ok {
			return nil, fmt.Errorf("services: %s is not a switch service", clip(s.String(), 64))
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
// jobs with GetConfigureSwitchCertificateJobStatus.
func (m *rackManager) ConfigureSwitchCertificate(ctx context.Context, req *rmspb.ConfigureSwitchCertificateRequest) (*rmspb.ConfigureSwitchCertificateResponse, error) {
	nodes, resp, err := m.switchNodes(req.GetNodes(), req.GetDomain(), "switch certificate install")
	if resp != nil || err != nil {
		return &rmspb.ConfigureSwitchCertificateResponse{Response: resp}, err
	}
	t := messages.TypeSwitchCertificate
	services, err := switchServices(req.GetServices())
	if err != nil {
		return &rmspb.ConfigureSwitchCertificateResponse{Response: refuseSwitchBatch(nodes, t, err)}, nil
	}
	cfg := m.deps.SwitchCert
	deps := cfg.Pacing
	deps.Nodes, deps.Fabric = m.deps.Nodes, m.deps.Fabric
	var workflow func(n hw.Node) messages.Workflow
	if cfg.Insecure {
		workflow = func(n hw.Node) messages.Workflow {
			return switchcert.DisablePlan{Node: n, Services: services}.Workflow(deps)
		}
	} else {
		domain := req.GetDomain()
		if domain == "" {
			domain = cfg.DefaultDomain
		}
		material, err := switchcert.LoadMaterial(cfg.CertRoot, domain)
		if err != nil {
			m.failed(ctx, "", "", err)
			return &rmspb.ConfigureSwitchCertificateResponse{Response: refuseSwitchBatch(nodes, t, err)}, nil
		}
		hello := req.GetTestHello()
		workflow = func(n hw.Node) messages.Workflow {
			return switchcert.ConfigurePlan{Node: n, Services: services, Material: material, TestHello: hello}.Workflow(deps)
		}
	}
	resp, children, err := m.admitSwitchBatch(ctx, switchBatch{operation: "ConfigureSwitchCertificate", jobType: t,
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
// to plain TLS over the NVOS CLI; it needs no material.
func (m *rackManager) BatchDisableSwitchMtls(ctx context.Context, req *rmspb.BatchDisableSwitchMtlsRequest) (*rmspb.BatchDisableSwitchMtlsResponse, error) {
	nodes, resp, err := m.switchNodes(req.GetNodes(), "", "switch mTLS disable")
	if resp != nil || err != nil {
		return &rmspb.BatchDisableSwitchMtlsResponse{Response: resp}, err
	}
	t := messages.TypeSwitchMtlsDisable
	services, err := switchServices(req.GetServices())
	if err != nil {
		return &rmspb.BatchDisableSwitchMtlsResponse{Response: refuseSwitchBatch(nodes, t, err)}, nil
	}
	deps := m.deps.SwitchCert.Pacing
	deps.Nodes = m.deps.Nodes
	resp, err = m.startSwitchBatch(ctx, switchBatch{operation: "BatchDisableSwitchMtls", jobType: t, nodes: nodes,
		workflow: func(n hw.Node) messages.Workflow {
			return switchcert.DisablePlan{Node: n, Services: services}.Workflow(deps)
		}})
	return &rmspb.BatchDisableSwitchMtlsResponse{Response: resp}, err
}

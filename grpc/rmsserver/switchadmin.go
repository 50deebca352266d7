package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/messages"
)

// Bounds of a password rotation request.
const (
	maxSwitchUser     = 32
	maxSwitchPassword = 256
)

// switchNodes decodes the nodes of a switch batch request and checks the
// request's domain; a request without nodes is answered with resp, a
// malformed one with err.
func (m *rackManager) switchNodes(set *rmspb.NodeSet, domain, what string) (nodes []hw.Node, resp *rmspb.NodeBatchResponse, err error) {
	if len(set.GetNodes()) == 0 {
		return nil, noNodesResponse(), nil
	}
	if err := checkIDs(idField{"domain", domain}); err != nil {
		return nil, nil, err
	}
	nodes, err = m.deps.nodesFromProto(set)
	if err != nil {
		return nil, nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, nil, errUnavailable(what)
	}
	return nodes, nil, nil
}

// UpdateSwitchSystemPassword rotates an NVOS user's password on each switch,
// one job child per switch (see hw/switchadmin/password.go). The node's
// host credentials are the current login, the request's password the next.
// A bad user name or password, no node, or a switch named twice is
// INVALID_ARGUMENT before any job, in upstream's order
// (handle_update_switch_system_password), which NICo reads as "rejected
// before dispatch".
func (m *rackManager) UpdateSwitchSystemPassword(ctx context.Context, req *rmspb.UpdateSwitchSystemPasswordRequest) (*rmspb.UpdateSwitchSystemPasswordResponse, error) {
	if err := passwordRequestProblem(req.GetUsername(), req.GetPassword()); err != nil {
		return nil, invalidArgument(err)
	}
	nodes, err := m.switchRequestNodes(req.GetNodes(), "switch password update")
	if err != nil {
		return nil, err
	}
	if err := duplicateSwitchTarget(nodes); err != nil {
		return nil, err
	}
	user, pw, deps := req.GetUsername(), hw.NewSecret(req.GetPassword()), m.switchAdminDeps()
	resp, err := m.startSwitchBatch(ctx, switchBatch{operation: "UpdateSwitchSystemPassword", jobType: messages.TypeSwitchSystemPasswordUpdate, nodes: nodes,
		workflow: func(n hw.Node) messages.Workflow {
			return switchadmin.PasswordPlan{Node: n, User: user, Password: pw}.Workflow(deps)
		}})
	return &rmspb.UpdateSwitchSystemPasswordResponse{Response: resp}, err
}

// passwordRequestProblem refuses a rotation request whose user name is not
// an NVOS user name or whose password could not be typed at a prompt, in
// upstream's words where upstream checks too (the lengths and control
// characters are rmsd's). The password is never quoted.
func passwordRequestProblem(user, password string) error {
	switch {
	case user == "":
		return errors.New("username is required and must be non-empty")
	case len(user) > maxSwitchUser:
		return fmt.Errorf("username is longer than %d characters", maxSwitchUser)
	case strings.IndexFunc(user, func(r rune) bool { return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) }) >= 0:
		return errors.New("username may only contain ASCII letters and digits")
	case password == "":
		return errors.New("password is required and must be non-empty")
	case len(password) > maxSwitchPassword:
		return fmt.Errorf("password is longer than %d bytes", maxSwitchPassword)
	case strings.IndexFunc(password, unicode.IsControl) >= 0:
		return errors.New("password must not contain control characters")
	}
	return nil
}

// BatchResetSwitchFactoryDefault resets each switch's NVOS to factory
// defaults, one job child per switch (see hw/switchadmin/factoryreset.go).
func (m *rackManager) BatchResetSwitchFactoryDefault(ctx context.Context, req *rmspb.BatchResetSwitchFactoryDefaultRequest) (*rmspb.BatchResetSwitchFactoryDefaultResponse, error) {
	nodes, resp, err := m.switchNodes(req.GetNodes(), req.GetDomain(), "switch factory reset")
	if resp != nil || err != nil {
		return &rmspb.BatchResetSwitchFactoryDefaultResponse{Response: resp}, err
	}
	deps := m.switchAdminDeps()
	resp, err = m.startSwitchBatch(ctx, switchBatch{operation: "BatchResetSwitchFactoryDefault",
		jobType: messages.TypeSwitchFactoryDefaultReset, nodes: nodes,
		workflow: func(n hw.Node) messages.Workflow { return switchadmin.FactoryResetPlan{Node: n}.Workflow(deps) }})
	return &rmspb.BatchResetSwitchFactoryDefaultResponse{Response: resp}, err
}

// BatchResetSwitchSdnFactoryDefault resets the scale-up fabric
// configuration on each switch, one job child per switch (see
// hw/switchadmin/sdnreset.go).
func (m *rackManager) BatchResetSwitchSdnFactoryDefault(ctx context.Context, req *rmspb.BatchResetSwitchSdnFactoryDefaultRequest) (*rmspb.BatchResetSwitchSdnFactoryDefaultResponse, error) {
	nodes, resp, err := m.switchNodes(req.GetNodes(), req.GetDomain(), "switch SDN factory default")
	if resp != nil || err != nil {
		return &rmspb.BatchResetSwitchSdnFactoryDefaultResponse{Response: resp}, err
	}
	deps := m.switchAdminDeps()
	resp, err = m.startSwitchBatch(ctx, switchBatch{operation: "BatchResetSwitchSdnFactoryDefault",
		jobType: messages.TypeSwitchSdnFactoryDefaultReset, nodes: nodes,
		workflow: func(n hw.Node) messages.Workflow { return switchadmin.SDNResetPlan{Node: n}.Workflow(deps) }})
	return &rmspb.BatchResetSwitchSdnFactoryDefaultResponse{Response: resp}, err
}

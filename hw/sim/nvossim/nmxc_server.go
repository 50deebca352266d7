package nvossim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw/nmxc/nmxcpb"
)

// The switch's NMX-C gRPC server (nmx_c.NMX_Controller on Config.NMXPort):
// Hello, the static config, and the inspection reads answered from the
// rack model of Config.Fabric. It answers only while the cluster runs the
// controller with external gRPC access (else Unavailable, as a closed port
// would); once the manager is bound to mTLS, only calls over TLS with a
// client certificate of its CA certificate are answered.

// FabricTray is a tray's physical identity as NMX-C reports it.
type FabricTray struct {
	ChassisSerial string
	SlotNumber    int
	TrayIndex     int
}

// FabricModel is what the switch's fabric manager sees of its rack: the
// compute and switch trays wired to the fabric.
type FabricModel struct {
	Computes []FabricTray
	Switches []FabricTray
}

// gpusPerTray and asicsPerTray shape the simulated topology.
const (
	gpusPerTray  = 4
	asicsPerTray = 2
	portsPerASIC = 4
)

type nmxServer struct {
	nmxcpb.UnimplementedNMX_ControllerServer
	sw *Switch
}

// admit checks that the controller is reachable for this call: the switch
// is up, no Unavailable fault is armed, the cluster runs the controller
// with external access, and mTLS is used when bound. It returns the header
// of a successful reply.
func (n *nmxServer) admit(ctx context.Context, gatewayID string) (*nmxcpb.ServerHeader, error) {
	s := n.sw
	if s.isDown() {
		return nil, status.Error(codes.Unavailable, "switch is unreachable")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.fabricLocked()
	if f := &c.faults; f.unavailable != 0 {
		if f.unavailable > 0 {
			f.unavailable--
		}
		return nil, status.Error(codes.Unavailable, "nmx-controller is not reachable (fault)")
	}
	ctl := c.apps[appController]
	if !c.enabled || !ctl.running || ctl.manager != "enabled" {
		return nil, status.Error(codes.Unavailable, "nmx-controller does not accept external gRPC clients")
	}
	if ctl.encryption == "mtls" && !s.clientVerifiedLocked(ctx, ctl.caID) {
		return nil, status.Error(codes.Unavailable, "nmx-controller requires mTLS with a client certificate of "+ctl.caID)
	}
	if strings.TrimSpace(gatewayID) == "" {
		return &nmxcpb.ServerHeader{ReturnCode: nmxcpb.ST_ReturnCode_NMX_ST_BADPARAM}, nil
	}
	return &nmxcpb.ServerHeader{DomainUuid: "sim-domain-" + s.cfg.ChassisSerial, AppUuid: "sim-nmx-c-" + s.cfg.HostName,
		AppVer: "1.2.0", ReturnCode: nmxcpb.ST_ReturnCode_NMX_ST_SUCCESS}, nil
}

func ok(h *nmxcpb.ServerHeader) bool { return h.GetReturnCode() == nmxcpb.ST_ReturnCode_NMX_ST_SUCCESS }

func (n *nmxServer) Hello(ctx context.Context, req *nmxcpb.HelloRequest) (*nmxcpb.HelloResponse, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil {
		return nil, err
	}
	if ok(h) && req.GetMajorVersion() != nmxcpb.ProtoMsgMajorVersion_NMX_MSG_MAJOR_VERSION_CURRENT {
		h.ReturnCode = nmxcpb.ST_ReturnCode_NMX_ST_NOT_SUPPORTED
	}
	return &nmxcpb.HelloResponse{ServerHeader: h}, nil
}

func (n *nmxServer) GetStaticConfig(ctx context.Context, req *nmxcpb.GetStaticConfigRequest) (*nmxcpb.GetStaticConfigResponse, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.GetStaticConfigResponse{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	static := s.fabricLocked().static
	kvs := &nmxcpb.ConfigKeyVals{}
	for _, k := range req.GetConfigKeys().GetConfigKey() {
		if v, found := static[k.GetConfigFileName()][k.GetKey()]; found {
			kvs.ConfigKeyVal = append(kvs.ConfigKeyVal, &nmxcpb.ConfigKeyVal{ConfigFileName: k.GetConfigFileName(), Key: k.GetKey(), Value: v})
		}
	}
	contents := &nmxcpb.ConfigFileContents{}
	for _, f := range req.GetConfigFiles().GetConfigFile() {
		name := f.GetConfigFileName()
		entries, found := static[name]
		if !found {
			continue
		}
		var text strings.Builder
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			kvs.ConfigKeyVal = append(kvs.ConfigKeyVal, &nmxcpb.ConfigKeyVal{ConfigFileName: name, Key: key, Value: entries[key]})
			fmt.Fprintf(&text, "%s=%s\n", key, entries[key])
		}
		contents.ConfigFileContent = append(contents.ConfigFileContent, &nmxcpb.ConfigFileContent{ConfigFileName: name, ConfigFileContent: text.String()})
	}
	// Key lookups are answered at the top level, as some NVOS builds do;
	// whole files inside staticConfig.
	resp := &nmxcpb.GetStaticConfigResponse{ServerHeader: h}
	if len(req.GetConfigFiles().GetConfigFile()) > 0 {
		resp.StaticConfig = &nmxcpb.StaticConfig{ConfigKeyVals: kvs, ConfigFileContents: contents}
	} else {
		resp.ConfigKeyVals = kvs
	}
	return resp, nil
}

func (n *nmxServer) SetStaticConfig(ctx context.Context, req *nmxcpb.SetStaticConfigRequest) (*nmxcpb.ReturnCode, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.ReturnCode{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.fabricLocked()
	kvs := req.GetStaticConfig().GetConfigKeyVals().GetConfigKeyVal()
	for _, kv := range kvs {
		if kv.GetConfigFileName() == "" || kv.GetKey() == "" {
			h.ReturnCode = nmxcpb.ST_ReturnCode_NMX_ST_BADPARAM
			return &nmxcpb.ReturnCode{ServerHeader: h}, nil
		}
	}
	if msg := s.takeFaultLocked(StepStaticConfig); msg != "" {
		s.log.Info().Str("issue", msg).Msg("nmx-c SetStaticConfig failed (fault)")
		h.ReturnCode = nmxcpb.ST_ReturnCode_NMX_ST_GENERIC_ERROR
		return &nmxcpb.ReturnCode{ServerHeader: h}, nil
	}
	now := s.now()
	for _, kv := range kvs {
		file, key := kv.GetConfigFileName(), kv.GetKey()
		if c.faults.sticky[[2]string{file, key}] {
			continue
		}
		if c.static[file] == nil {
			c.static[file] = map[string]string{}
		}
		c.static[file][key] = kv.GetValue()
		// A running controller without a topology takes its first one at
		// once; other fm_config changes wait for a restart.
		ctl := c.apps[appController]
		if file == fileFM && key == keyTopology && ctl.running && ctl.effective[keyTopology] == "" && kv.GetValue() != "" {
			ctl.effective[keyTopology] = kv.GetValue()
			ctl.readySince = now
		}
	}
	return &nmxcpb.ReturnCode{ServerHeader: h}, nil
}

// health maps a sampled indicator.
func health(healthy bool) nmxcpb.Health {
	if healthy {
		return nmxcpb.Health_NMX_HEALTH_HEALTHY
	}
	return nmxcpb.Health_NMX_HEALTH_DEGRADED
}

func (n *nmxServer) GetDomainStateInfo(ctx context.Context, req *nmxcpb.DomainStateInfoRequest) (*nmxcpb.DomainStateInfo, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.DomainStateInfo{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, plane := s.appViewLocked(appController, s.now())
	return &nmxcpb.DomainStateInfo{ServerHeader: h, ControllerHealth: health(!s.fabricLocked().faults.degraded["controller"]),
		ControlPlaneState: plane}, nil
}

func (n *nmxServer) GetTopologyInfo(ctx context.Context, req *nmxcpb.TopologyInfoRequest) (*nmxcpb.TopologyInfo, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.TopologyInfo{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fabricLocked().faults
	out := &nmxcpb.TopologyInfo{ServerHeader: h}
	for _, t := range s.cfg.Fabric.Computes {
		for g := 0; g < gpusPerTray; g++ {
			out.Devices = append(out.Devices, &nmxcpb.TopologyDevice{DeviceId: fmt.Sprintf("%s-%d-gpu%d", t.ChassisSerial, t.SlotNumber, g),
				DeviceType: "GPU", Health: health(!f.degraded["gpu"])})
		}
	}
	for _, t := range s.cfg.Fabric.Switches {
		for a := 0; a < asicsPerTray; a++ {
			id := fmt.Sprintf("%s-%d-asic%d", t.ChassisSerial, t.SlotNumber, a)
			out.Devices = append(out.Devices, &nmxcpb.TopologyDevice{DeviceId: id, DeviceType: "SWITCH", Health: health(!f.degraded["switch"])})
			for p := 0; p < portsPerASIC; p++ {
				out.Ports = append(out.Ports, &nmxcpb.TopologyPort{DeviceId: id, PortNum: uint32(p + 1), AdminUp: true, OperUp: !f.degraded["link"]})
			}
		}
	}
	return out, nil
}

func location(t FabricTray) *nmxcpb.NodeLocation {
	return &nmxcpb.NodeLocation{ChassisSerial: t.ChassisSerial, SlotNumber: uint32(max(t.SlotNumber, 0)), TrayIndex: uint32(max(t.TrayIndex, 0))}
}

func (n *nmxServer) GetComputeNodeInfoList(ctx context.Context, req *nmxcpb.NodeInfoListRequest) (*nmxcpb.ComputeNodeInfoList, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.ComputeNodeInfoList{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &nmxcpb.ComputeNodeInfoList{ServerHeader: h}
	for _, t := range s.cfg.Fabric.Computes {
		out.Nodes = append(out.Nodes, &nmxcpb.ComputeNodeInfo{Location: location(t), Health: health(!s.cluster.faults.degraded["compute"])})
	}
	return out, nil
}

func (n *nmxServer) GetSwitchNodeInfoList(ctx context.Context, req *nmxcpb.NodeInfoListRequest) (*nmxcpb.SwitchNodeInfoList, error) {
	h, err := n.admit(ctx, req.GetGatewayId())
	if err != nil || !ok(h) {
		return &nmxcpb.SwitchNodeInfoList{ServerHeader: h}, err
	}
	s := n.sw
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &nmxcpb.SwitchNodeInfoList{ServerHeader: h}
	for _, t := range s.cfg.Fabric.Switches {
		out.Nodes = append(out.Nodes, &nmxcpb.SwitchNodeInfo{Location: location(t), Health: health(!s.cluster.faults.degraded["switch"])})
	}
	return out, nil
}

// DegradeFabric makes the fabric manager report one kind of component
// (controller, gpu, compute, switch or link) abnormal while on.
func (s *Switch) DegradeFabric(component string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.fabricLocked().faults
	if f.degraded == nil {
		f.degraded = map[string]bool{}
	}
	f.degraded[component] = on
	s.log.Info().Str("component", component).Bool("on", on).Msg("fault: fabric component degraded")
}

package authz

import (
	"slices"
	"strings"
)

// The services whose every RPC is in the table.
const (
	rackManager   = "rack_manager.RackManager"
	rackManagerV2 = "rack_manager_v2.RackManagerV2"
	adminService  = "rmsd_admin.Admin"
	opsService    = "rmsd_ops.Ops"
)

// methods maps each RPC, by service and method name, to its one group. A
// test walks the services' descriptors and fails on an RPC missing here,
// so a new RPC cannot be served unclassified.
var methods = map[string]map[string]Group{
	rackManager: {
		"SetPowerState":                             Power,
		"BatchSetPowerState":                        Power,
		"GetPowerState":                             Read,
		"BatchGetPowerState":                        Read,
		"ExecuteColdReboot":                         Power,
		"ListNodeInventory":                         Read,
		"CreateNodes":                               Admin,
		"UpdateNode":                                Admin,
		"DeleteNode":                                Admin,
		"ListRacks":                                 Read,
		"GetNodeDeviceInfo":                         Read,
		"ListNodeDeviceInfoByNodeType":              Read,
		"BatchGetNodeDeviceInfo":                    Read,
		"GetNodeFirmwareInventory":                  Read,
		"BatchGetFirmwareInventory":                 Read,
		"CompareFirmwareObject":                     Read,
		"UpdateFirmware":                            Firmware,
		"BatchUpdateFirmwareByNodeType":             Firmware,
		"BatchUpdateFirmware":                       Firmware,
		"UpdateSwitchSystemImage":                   Firmware,
		"GetRackFirmwareInventory":                  Read,
		"AddFirmwareObject":                         Firmware,
		"GetFirmwareObject":                         Read,
		"ListFirmwareObjects":                       Read,
		"DeleteFirmwareObject":                      Firmware,
		"SetDefaultFirmwareObject":                  Firmware,
		"ApplyStoredFirmwareObject":                 Firmware,
		"ApplyFirmwareObject":                       Firmware,
		"ApplySwitchSystemImage":                    Firmware,
		"ApplyStoredSwitchSystemImage":              Firmware,
		"GetFirmwareObjectHistory":                  Read,
		"ListSwitchFirmware":                        Read,
		"PushSwitchFirmware":                        Firmware,
		"BatchResetSwitchFactoryDefault":            Destructive,
		"ConfigureScaleUpFabricManager":             Fabric,
		"GetScaleUpFabricStatus":                    Read,
		"InspectScaleUpFabrics":                     Read,
		"BatchResetSwitchSdnFactoryDefault":         Destructive,
		"BatchSetScaleUpFabricState":                Fabric,
		"BatchGetScaleUpFabricServiceStatus":        Read,
		"GetScaleUpFabricState":                     Read,
		"SetScaleUpFabricTelemetryInterfaceState":   Fabric,
		"ConfigureSwitchCertificate":                SwitchAdmin,
		"BatchDisableSwitchMtls":                    SwitchAdmin,
		"GetConfigureSwitchCertificateJobStatus":    Read,
		"ListSwitchSystemImages":                    Read,
		"GetSwitchSystemImageJobStatus":             Read,
		"UpdateSwitchSystemPassword":                Destructive,
		"BatchCollectSwitchSpdmAttestationEvidence": SwitchAdmin,
		"GetVersion":                                Read,
		"GetFirmwareJobStatus":                      Read,
		"GetJobStatus":                              Read,
	},
	rackManagerV2: {
		"ConfigureScaleUpFabricManager": Fabric,
		"StartSystemValidation":         Power,
	},
	opsService: {
		"ListAuditRecords": Read,
		"ListJobs":         Read,
	},
	adminService: {
		"ListActors":            Admin,
		"KillActors":            Admin,
		"ReleaseQuarantinedJob": Admin,
		"CancelJob":             Admin,
	},
}

// openServices answer every caller: probes and tooling must reach them
// without a certificate a role names.
var openServices = map[string]bool{
	"grpc.health.v1.Health":                    true,
	"grpc.reflection.v1.ServerReflection":      true,
	"grpc.reflection.v1alpha.ServerReflection": true,
}

// splitMethod splits "/package.Service/Method".
func splitMethod(fullMethod string) (service, method string) {
	service, method, _ = strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	return service, method
}

// Open reports whether fullMethod ("/package.Service/Method") is open to
// every caller (health and reflection).
func Open(fullMethod string) bool {
	service, _ := splitMethod(fullMethod)
	return openServices[service]
}

// GroupOf is the group of fullMethod; false for an RPC the table does not
// know, which authorization denies.
func GroupOf(fullMethod string) (Group, bool) {
	service, method := splitMethod(fullMethod)
	g, ok := methods[service][method]
	return g, ok
}

// MethodsOf lists the RPCs of group g as "Service/Method" with the service
// unqualified (RackManager/SetPowerState), sorted: the lists docs/authz.md
// shows.
func MethodsOf(g Group) []string {
	var out []string
	for service, table := range methods {
		short := service[strings.LastIndex(service, ".")+1:]
		for method, mg := range table {
			if mg == g {
				out = append(out, short+"/"+method)
			}
		}
	}
	slices.Sort(out)
	return out
}

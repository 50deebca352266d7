package auditrpc

import (
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// mutating are the rack_manager methods that change something: power,
// cold reboots, node registration, firmware and switch image updates, the
// firmware catalog, switch administration (factory resets, passwords,
// certificates, mTLS), the scale-up fabric and system validation runs.
var mutating = map[string]bool{
	rmspb.RackManager_SetPowerState_FullMethodName:                           true,
	rmspb.RackManager_BatchSetPowerState_FullMethodName:                      true,
	rmspb.RackManager_ExecuteColdReboot_FullMethodName:                       true,
	rmspb.RackManager_CreateNodes_FullMethodName:                             true,
	rmspb.RackManager_UpdateNode_FullMethodName:                              true,
	rmspb.RackManager_DeleteNode_FullMethodName:                              true,
	rmspb.RackManager_UpdateFirmware_FullMethodName:                          true,
	rmspb.RackManager_BatchUpdateFirmwareByNodeType_FullMethodName:           true,
	rmspb.RackManager_BatchUpdateFirmware_FullMethodName:                     true,
	rmspb.RackManager_UpdateSwitchSystemImage_FullMethodName:                 true,
	rmspb.RackManager_AddFirmwareObject_FullMethodName:                       true,
	rmspb.RackManager_DeleteFirmwareObject_FullMethodName:                    true,
	rmspb.RackManager_SetDefaultFirmwareObject_FullMethodName:                true,
	rmspb.RackManager_ApplyStoredFirmwareObject_FullMethodName:               true,
	rmspb.RackManager_ApplyFirmwareObject_FullMethodName:                     true,
	rmspb.RackManager_ApplySwitchSystemImage_FullMethodName:                  true,
	rmspb.RackManager_ApplyStoredSwitchSystemImage_FullMethodName:            true,
	rmspb.RackManager_PushSwitchFirmware_FullMethodName:                      true,
	rmspb.RackManager_BatchResetSwitchFactoryDefault_FullMethodName:          true,
	rmspb.RackManager_ConfigureScaleUpFabricManager_FullMethodName:           true,
	rmspb.RackManager_BatchResetSwitchSdnFactoryDefault_FullMethodName:       true,
	rmspb.RackManager_BatchSetScaleUpFabricState_FullMethodName:              true,
	rmspb.RackManager_SetScaleUpFabricTelemetryInterfaceState_FullMethodName: true,
	rmspb.RackManager_ConfigureSwitchCertificate_FullMethodName:              true,
	rmspb.RackManager_BatchDisableSwitchMtls_FullMethodName:                  true,
	rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName:              true,
	rmspbv2.RackManagerV2_ConfigureScaleUpFabricManager_FullMethodName:       true,
	rmspbv2.RackManagerV2_StartSystemValidation_FullMethodName:               true,
}

// reads are the rack_manager methods that change nothing and are not
// audited: status polls, inventories, listings, comparisons, attestation
// evidence.
var reads = map[string]bool{
	rmspb.RackManager_GetPowerState_FullMethodName:                             true,
	rmspb.RackManager_BatchGetPowerState_FullMethodName:                        true,
	rmspb.RackManager_ListNodeInventory_FullMethodName:                         true,
	rmspb.RackManager_ListRacks_FullMethodName:                                 true,
	rmspb.RackManager_GetNodeDeviceInfo_FullMethodName:                         true,
	rmspb.RackManager_ListNodeDeviceInfoByNodeType_FullMethodName:              true,
	rmspb.RackManager_BatchGetNodeDeviceInfo_FullMethodName:                    true,
	rmspb.RackManager_GetNodeFirmwareInventory_FullMethodName:                  true,
	rmspb.RackManager_BatchGetFirmwareInventory_FullMethodName:                 true,
	rmspb.RackManager_CompareFirmwareObject_FullMethodName:                     true,
	rmspb.RackManager_GetRackFirmwareInventory_FullMethodName:                  true,
	rmspb.RackManager_GetFirmwareObject_FullMethodName:                         true,
	rmspb.RackManager_ListFirmwareObjects_FullMethodName:                       true,
	rmspb.RackManager_GetFirmwareObjectHistory_FullMethodName:                  true,
	rmspb.RackManager_ListSwitchFirmware_FullMethodName:                        true,
	rmspb.RackManager_GetScaleUpFabricStatus_FullMethodName:                    true,
	rmspb.RackManager_InspectScaleUpFabrics_FullMethodName:                     true,
	rmspb.RackManager_BatchGetScaleUpFabricServiceStatus_FullMethodName:        true,
	rmspb.RackManager_GetScaleUpFabricState_FullMethodName:                     true,
	rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName:    true,
	rmspb.RackManager_ListSwitchSystemImages_FullMethodName:                    true,
	rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName:             true,
	rmspb.RackManager_BatchCollectSwitchSpdmAttestationEvidence_FullMethodName: true,
	rmspb.RackManager_GetVersion_FullMethodName:                                true,
	rmspb.RackManager_GetFirmwareJobStatus_FullMethodName:                      true,
	rmspb.RackManager_GetJobStatus_FullMethodName:                              true,
}

// Mutating reports whether fullMethod is a rack_manager method that
// changes something: the main server's audited set. Any other method (a
// read, health, reflection, the read service) is not audited.
func Mutating(fullMethod string) bool { return mutating[fullMethod] }

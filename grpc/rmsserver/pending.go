package rmsserver

// pendingRPCs lists the RPCs that are not implemented yet: they answer
// UNIMPLEMENTED through the embedded Unimplemented servers. Each issue that
// implements an RPC removes it from here; TestEveryRPCIsImplementedOrPending
// fails if an implemented RPC is still listed, or a listed one is implemented,
// or a name here matches no RPC.
var pendingRPCs = map[string]bool{
	"/rack_manager_v2.RackManagerV2/ConfigureScaleUpFabricManager": true,
}

// Package fabricsync is the declarative scale-up fabric reconcile of
// RackManagerV2.ConfigureScaleUpFabricManager (rms-spec §2.7 #44 and its
// V2 rules, southbound §3.12), run as one job per rack.
//
// Check validates a request before any job exists (its refusals are
// *InvalidError, INVALID_ARGUMENT at the gRPC edge). The job then, in
// order:
//
//  1. elects the primary: the one requested, else the switch at the lowest
//     slot number in the rack (unplaced switches last, node id breaking
//     ties);
//  2. maps the primary's fm_config:<key> descriptor attributes onto
//     fm_config entries; one that names a file and key the request already
//     sets fails the job before any switch is changed;
//  3. snapshots every switch: cluster state and node IPs, and the primary's
//     NMX-C mTLS binding;
//  4. disables the cluster and clears both node IPs of every other switch
//     (skipping what is already so);
//  5. sets the primary's node IPs (its host endpoint address; the first
//     additional host endpoint's address as secondary, or the secondary it
//     has when none is given), enables its cluster and then the
//     controller's external gRPC access;
//  6. restores the mTLS binding the snapshot saw (secure mode) or unsets it
//     (insecure_switch), says Hello to NMX-C;
//  7. reads the topology, the ordered extra static configs and the bridged
//     entries and sets only those that differ; restarts NMX-C only when an
//     fm_config value changed;
//  8. waits for CONTROL_PLANE_STATE_CONFIGURED and verifies that exactly one
//     switch, the primary, has its cluster enabled.
//
// Every change is recorded with its undo before it is made; any failure
// after the first change undoes them in reverse order, so the switches end
// as the snapshot saw them (an undo that fails is reported beside the
// original error). Static config keys are read right before the step that
// may change them (NMX-C answers only once the primary's cluster runs); a key that had no value cannot be unset
// again and is left as set. Each device call is one short operation; the
// job's description names the step under way.
//
// On success result_json is the fabric status read back at the end
// (Deps.Render: protobuf JSON of rack_manager.ScaleUpFabricStatus).
package fabricsync

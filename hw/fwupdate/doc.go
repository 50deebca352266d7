// Package fwupdate is the firmware update of one node, the workflow behind
// every firmware job child (UpdateFirmware, BatchUpdateFirmware*,
// ApplyStoredFirmwareObject, ApplyFirmwareObject): for each target in
// order it checks whether the node already runs the expected version,
// uploads the package, follows the device's task to its end and, when the
// plan asks, activates the new firmware and checks the versions the node
// then reports.
//
// The package drives a node only through its platform adapter
// (hw/platform), one short operation at a time through hw/nodeops, so a
// long flash never holds one of the runner's shared slots while it waits.
// It holds no node: the job engine does, for the job's whole life. It does
// not decide which targets a node gets (hw/firmware/selector and the gRPC
// edge do) and reads no manifest.
//
// result_json follows upstream's firmware leaf documents (job-model §3):
// {"rack_id","node_id","targets_completed","targets_skipped","targets",
// "activated","activation_count","post_activation_version_check","status"}
// on success, with "status":"already_up_to_date" when every target was
// skipped, and {"status":"failed","phase",...} on failure.
//
// Which inventory entry stands for a target, for the already-up-to-date
// check and the post-activation version check, is hw/firmware/compare.Find,
// the rule CompareFirmwareObject answers with (see entriesFor).
package fwupdate

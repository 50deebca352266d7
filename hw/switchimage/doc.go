// Package switchimage is the NVOS system image update of one switch tray
// (southbound §3.8), run as a job by UpdateSwitchSystemImage,
// ApplySwitchSystemImage and ApplyStoredSwitchSystemImage.
//
// The update is six stages, in order: inspect_state (a switch that already
// runs the target build on both its current and its next partition is
// done, already_up_to_date), cleanup_old_partition (@uninstall of the
// other partition; "Nothing to uninstall" is a success), stage_image (SFTP
// to /host/nos-images/<file>, skipped when a file of the same size is
// there), trigger_install (forced @install), wait_for_install_handoff (the
// install action succeeds or announces the reboot) and
// wait_for_target_steady_state (the switch reports the target as both
// current and next build, read through its reboot in three windows). An
// expired admin password after the install is recovered once over SSH
// (southbound §3.9) and the wait goes on.
//
// Every stage is recorded in a timeline that becomes the job's
// result_json; stages an early end never reached are "skipped". Each
// device call is one short operation on the node runner (hw/nodeops), so
// a long wait holds none of its slots; every wait ends at once when the
// job's context does.
package switchimage

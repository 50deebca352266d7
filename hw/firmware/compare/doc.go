// Package compare compares the firmware a manifest proposes with the
// firmware a node runs: for each manifest component a node type gets (see
// hw/firmware/selector), which inventory entry holds that component's
// running firmware (Find, the matching rule) and whether its version is the
// proposed one (Component, Node).
//
// CompareFirmwareObject answers its comparisons from here, and a firmware
// update can ask the same question ("already up to date?") with Find and
// Component. The package performs no I/O: the caller reads the node's
// inventory (platform.Device.FirmwareInventory) and passes it in.
//
// A comparison's Status is
//
//   - Matched: the entry's running version equals the proposed version,
//     without regard to case or surrounding space;
//   - Mismatched: it differs;
//   - Missing: no inventory entry holds the component;
//   - Unverified: nothing can be said: the manifest gives no version, the
//     node reports none ("N/A"), or the node could not be read at all
//     (Unverified, built by the caller).
package compare

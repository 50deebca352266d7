// Package nvssvtsim is a stand-in for NVIDIA's NVSSVT, for the rack
// simulator: the same command line, environment, report and exit statuses
// as hw/nvssvt defines them, with a handful of real checks of the DUT's
// BMC over Redfish (HTTPS, basic authentication, certificates not
// verified, as the simulated BMCs present a private CA's):
//
//   - redfish_service_root: GET /redfish/v1 answers with a RedfishVersion;
//     it failing skips the others;
//   - systems: the Systems collection has a member (skipped on a BMC
//     without Systems, such as a power shelf's);
//   - power_state: that system's PowerState is On;
//   - chassis: the Chassis collection has a member, and its Status.Health
//     is OK when it reports one;
//   - firmware_inventory: UpdateService/FirmwareInventory has members, and
//     the first few each report a Version.
//
// The configuration override, when given, must be a JSON object (the
// stand-in exits 2 otherwise, as NVSSVT refuses a malformed one); its
// "skip" list names checks to skip. The stand-in writes its argv to
// argv.json in the log directory (a record of exactly what it was given)
// and its progress to stdout. One flag is its own: --request-timeout bounds
// each Redfish request (default 15s); tests that need a scan in flight for
// long pass it before the contract's arguments.
//
// Main is the whole program: cmd/nvssvt-sim wraps it, and `rmsd
// --simulate` runs it as `rmsd nvssvt-sim ...` (see Command).
package nvssvtsim

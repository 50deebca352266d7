// Package nicflash flashes in-band NIC firmware (ConnectX-7, ConnectX-8 and
// BlueField-3 NIC) on a compute host over SSH with the Mellanox tools, the
// way upstream's nvfwupd Flint workflow does (flint.rs update_firmware,
// verify_firmware_versions, wait_for_host_os_ready):
//
//  1. check that mst and flint exist, start MST (sudo), list the physical
//     devices with mst status -v and read each one's PSID and versions with
//     flint -d <dev> --yes query;
//  2. make a private directory with mktemp -d /tmp/nvfwupd-flint.XXXXXX,
//     upload every image there over SFTP and read its PSID and version with
//     flint -i <image> query;
//  3. pair each device with the image of its family and PSID (a device no
//     image fits stops the update before anything is flashed);
//  4. burn, in parallel, every device that does not already run its
//     image's version (all of them when forced) with
//     flint -d <dev> --yes -i <image> b, retrying each failed burn once;
//  5. remove the directory.
//
// Activation is not this package's: the tray's power cycle is (the caller
// drives the BMC). After it, WaitReady waits for the host OS and Verify
// checks that every device runs its image's version.
//
// Commands that need root run through sudo -S with the login's password
// on standard input (never on the command line); a root login runs them
// directly. Passwords never appear in errors or logs.
package nicflash

// Package manifest parses and validates a firmware manifest, the "SOT JSON"
// a caller sends as config_json to AddFirmwareObject, ApplyFirmwareObject,
// ApplySwitchSystemImage and CompareFirmwareObject (rms-spec §5.2).
//
// Parse checks the document (a JSON object, exactly one milestone, the
// required fields, an object id {ProductName}_{Name} usable as a directory
// name) and resolves what rmsd can do with it:
//
//   - routing: each board SKU's Type names a node kind ("Compute Node",
//     "Switch Tray", "Power Shelf"), and the SKU applies to every node type
//     of that kind, whatever the ProductName (upstream routes by this Type
//     alone; the ProductName only makes the object id, and one naming no
//     known product family is accepted). The legacy "VRNVL72 Compute Node"
//     applies to VR-NVL72 compute trays only. A power-shelf component
//     nested under a Compute Node SKU (the GB200 sample's "Powershelf FW")
//     goes to the power shelves. A SKU of unknown Type is kept but routed
//     nowhere (a Warning).
//   - artifacts: of a routed firmware entry's Locations (its own, then its
//     SubComponents'), the payloads (Type Firmware, or a package file name
//     with no or a generic Type) are downloadable; by default only the first
//     per entry is kept (Options.MultiPackage keeps all for chosen node
//     types). Each kept payload needs a supported source (http, https,
//     artifactory, jfrog or a local file; s3, ftp, ftps, sftp, tftp and
//     credentials in the URL are refused), a Sha256 and a cache file name,
//     the last element of its Location.
//   - switch system images: Software entries with Component "NVOS".
//   - Metadata: the FirmwareObjectMetadata the gRPC edge converts (device
//     components per node type, switch system images).
//
// Every problem found is reported at once in one *Error matching ErrInvalid,
// which the gRPC edge answers with INVALID_ARGUMENT. The package performs no
// I/O: it neither downloads nor checks local files (hw/firmware/download
// does both).
package manifest

// Package selector decides which of a firmware object's components and
// packages a node gets when a manifest is applied to it (or compared with
// it): ApplyStoredFirmwareObject, ApplyFirmwareObject and
// CompareFirmwareObject share it.
//
// The rules (rms-spec §2.5, proto comments of FirmwareObjectComponentFilter):
//
//   - No filter at all: every node type gets every component the manifest
//     routes to it, except the in-band NIC components (CX7, CX8, BF3_NIC,
//     BF3_BFB), which are opt-in: only a filter naming them selects them.
//   - Filters given: only the node types they list are updated. A listed
//     type with an empty component list gets every (non-NIC) component; a
//     non-empty list gets exactly the components it names, matched without
//     regard to case, spaces, '-', '_' or '+' against the normalised name
//     ("BMC", "PowerShelfFW") or the manifest's own label ("BMC+FPGA+EROT").
//   - Filters keyed by a node descriptor supplement those keyed by the enum;
//     when both name the same node type the enum-keyed one wins.
//   - The deprecated global component list (ApplyStoredFirmwareObject's
//     components) applies to every node type no keyed filter lists.
//   - Of a component's packages only those of the requested channel are
//     used: the artifact's Type (Prod, Beta, Dev) matched without regard to
//     case against firmware_type, an empty firmware_type meaning "prod"; a
//     package whose Type is empty serves every channel.
//
// Supermicro GB300 compute trays take their packages in a fixed order —
// the HMC "nosbios" package, then BIOS, then the host BMC — with an
// activation after each of the first two (rms-spec §2.4); Targets builds
// that order.
package selector

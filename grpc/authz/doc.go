// Package authz decides who may call which RPC: [authz] roles, each a set
// of permission groups optionally limited to racks, bound to verified
// client-certificate identities (subject CN and OU, DNS and URI SANs,
// exact or path.Match globs). Every RPC rmsd serves belongs to exactly one
// group (methods.go); health and reflection are open to every caller, and
// an RPC of a service the table does not know is denied. The package
// decides; the gRPC server asks it, with the racks a request names, before
// any handler runs. docs/authz.md describes the model.
package authz

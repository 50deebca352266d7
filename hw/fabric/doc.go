// Package fabric drives the NVLink scale-up fabric services of one NVOS
// switch: the fabric cluster and its apps (NVUE REST and the nv CLI over
// SSH), the node-IP settings of the cluster, the NMX-C fabric manager over
// gRPC (Hello and static configuration) and the gNMI telemetry server
// (southbound §3.12). model.go holds the observed-state types every
// consumer shares; the workflows that combine these steps (the v1 bring-up,
// the v2 reconcile) live with their RPCs.
package fabric

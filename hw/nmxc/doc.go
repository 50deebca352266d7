// Package nmxc is rmsd's client of NMX-C, the NVLink fabric manager
// controller that runs as the nmx-controller cluster app on an NVOS switch
// (gRPC service nmx_c.NMX_Controller, port 9370; southbound §3.12). Every
// call carries a per-RPC deadline and the configured gateway id, and a reply
// counts only when its server header says NMX_ST_SUCCESS. Hello is retried,
// and only on gRPC Unavailable. nmxcpb holds the code generated from
// proto/nmx_c/nmx_c.proto.
package nmxc

// Package replay answers a few of rmsd's RPCs from memory with replies
// recorded from a real daemon: the bare grpc-go server the load harness
// (bench/load) measures rmsd against. A Recording holds one reply per
// method, as the daemon encoded it; Server returns it for every request,
// so the bare server's replies have the daemon's message types and sizes
// and its cost is gRPC's own: transport, framing, request decoding and
// reply encoding.
package replay

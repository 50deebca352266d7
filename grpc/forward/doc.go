// Package forward carries a RackManager call from the cluster member that
// received it to the member that owns its rack, where the rack's job
// engine runs, and answers the caller as a single rmsd would.
//
// Every method of both services has a class (classify.go): Local calls
// are served by the receiving member itself; ByJob calls (the job-status
// RPCs) go to the owner of the job's rack, found in the shared store and
// cached; ByRack calls (everything that admits a job, takes a lease or
// writes nodes) go whole to the owner of their one rack. A ByRack request
// whose nodes are in several racks is split into one request per rack
// when its method can be (split.go), each part forwarded to its owner,
// and the replies merged (merge.go); a job request split so gets a
// cluster parent (parent.go), recorded in the store before the caller
// sees its id, whose status any member answers from the racks' jobs.
//
// The receiving side is Interceptor, which runs innermost in the
// receiving member's gRPC server, after authorization: the receiving
// member authorises, the owner trusts the cluster. The owner's side is
// Serve, which a rack's grain calls with the rack's handlers. What this
// package does not do: membership, placement or delivery between members
// (the Cluster it is given), or any job, lease or node decision (the
// owner's engine makes them).
package forward

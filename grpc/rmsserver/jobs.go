package rmsserver

// JobService is what the job-status RPCs need from the job engine. It is
// filled in by the job-engine work; until then no job RPC is served.
type JobService interface{}

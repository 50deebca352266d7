// Command rmsprobe asks a gRPC server's grpc.health.v1.Health service
// whether it is SERVING, and says so in its exit code: the health check of
// rmsd's container image, whose base image has no shell or grpcurl.
//
// Usage:
//
//	rmsprobe [--addr 127.0.0.1:8801] [--service NAME] [--timeout 3s]
//	         [--ca FILE --cert FILE --key FILE [--server-name NAME]]
//
// Without --ca it speaks plaintext HTTP/2, for an rmsd started with both
// insecure switches; with --ca, --cert and --key it presents that client
// certificate, as rmsd's mTLS listener requires. The exit code is 0 when the
// service is SERVING, 1 when it is not or cannot be asked, and 2 on a usage
// error. Each flag but --timeout can also come from the environment
// (RMSPROBE_ADDR, RMSPROBE_SERVICE, RMSPROBE_CA, RMSPROBE_CERT, RMSPROBE_KEY,
// RMSPROBE_SERVER_NAME), a flag winning. It never changes anything on the
// server.
package main

import "os"

func main() {
	os.Exit(probe(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

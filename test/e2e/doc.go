// Package e2e holds black-box tests of the rmsd binary: they build it, start
// it as a user would (flags, config file, environment), talk to it with the
// generated gRPC client and signal it, asserting only what a user can see.
package e2e

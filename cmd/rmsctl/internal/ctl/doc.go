// Package ctl is rmsctl's command tree: global target flags and the config
// file, the gRPC connection (plaintext, TLS or mTLS), one file per command
// group, the text and JSON printers, and the job watcher with its terminal
// progress view.
//
// Every command prints the reply of its RPC: a human table or line by
// default, or with -o json the reply in protobuf JSON, one compact object
// per line (a command that makes one RPC per node prints one line per
// node; jobs watch prints one line per change). Errors go to stderr and
// set the exit code (see ExitOK and its siblings); an in-band FAILURE
// reply is an error too, after the reply has been printed.
package ctl

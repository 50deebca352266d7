// Package switchcert runs the switch mTLS jobs of southbound §3.11:
// installing certificate material on an NVLink switch and binding NVOS
// services to it (configure.go), and moving services back to plain TLS
// over the NVOS CLI (disable.go).
//
// Each workflow is one job child on one switch, which the job engine holds
// for the job's whole life; every device step is one short operation of
// platform.SwitchCertifier through the node runner. A configure job records
// a stage timeline in its result_json.
//
// The material is read on rmsd's side from switch_cert_root (material.go)
// and copied to the switch over SFTP. Its private key is a secret: it is
// written to the switch and nowhere else, never logged, never quoted in an
// error, a description or a result.
package switchcert

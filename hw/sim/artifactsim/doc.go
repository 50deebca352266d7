// Package artifactsim is a simulated artifact server (an Artifactory or a
// plain web server holding firmware packages) for tests of firmware
// downloads: plain HTTP on a loopback port, serving files published in
// memory or found in a directory.
//
// Publish and PublishPackage return an artifact's URL and SHA-256, ready to
// be written into a firmware manifest; PublishPackage makes the file a
// simulated device reports the version of once flashed (sim.FirmwarePackage).
// With Options.Token set, every request needs that value in X-JFrog-Art-Api
// and gets 401 without it. Fault knobs per artifact (SetFault) serve wrong
// bytes, stall, throttle, omit the length, answer a status such as 404,
// redirect, or hold requests until the test releases them; the server
// counts requests in flight and their maximum, and records every request
// (whether it carried a token, never the token itself).
//
// Close stops the listener and every handler, including held and stalled
// ones; no goroutine outlives it.
package artifactsim

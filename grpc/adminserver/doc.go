// Package adminserver serves rmsd's own admin service, rmsd_admin.Admin:
// listing the job engine's actors and killing them, and cancelling jobs, for operators and
// chaos tests driving the daemon from outside the process. It is plaintext
// and refuses any peer that is not on the loopback interface; rmsd only
// ever binds it to a loopback address, and only when [admin] enabled.
package adminserver

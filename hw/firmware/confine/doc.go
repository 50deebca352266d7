// Package confine keeps a file name that comes from outside rmsd (a firmware
// manifest's artifact name, a request's filename or local_file_path) inside
// the directory it is meant for.
//
// Path refuses a name with a ".." element, an absolute name outside the
// root, and a name that reaches outside the root through a symbolic link
// (a link to elsewhere, or a dangling link a later create would follow). It
// returns the name's real path, free of links. Open opens such a name
// through an os.Root, so a link swapped in after the check cannot escape
// either. Refusals wrap ErrEscapes or ErrInvalidName; a root that cannot be
// read is an ordinary wrapped error.
//
// The package reads the file system (Lstat, symlink resolution) but never
// writes to it.
package confine

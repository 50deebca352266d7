package rmsserver

// firmwareFiles resolves the firmware files one request names, each once
// however many of its nodes name it: a batch of 1,000 nodes with one
// package confines and checks that package's path once, not 1,000 times
// (each check walks the path's symlinks and stats the file). A request's
// nodes see the same answer for the same file name; the next request
// looks again.
type firmwareFiles struct {
	dir  string
	seen map[string]resolvedFile
}

// resolvedFile is firmwareFile's answer for one name.
type resolvedFile struct {
	path string
	err  error
}

// newFirmwareFiles resolves files inside dir ([workflows] firmware_dir).
func newFirmwareFiles(dir string) *firmwareFiles {
	return &firmwareFiles{dir: dir, seen: map[string]resolvedFile{}}
}

// resolve is firmwareFile of name, looked at once per request.
func (f *firmwareFiles) resolve(name string) (string, error) {
	if r, ok := f.seen[name]; ok {
		return r.path, r.err
	}
	path, err := firmwareFile(f.dir, name)
	f.seen[name] = resolvedFile{path: path, err: err}
	return path, err
}

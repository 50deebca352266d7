package nvossim

import (
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// memFile is one regular file of the simulated NVOS file system.
type memFile struct {
	data  []byte
	mode  os.FileMode
	mtime time.Time
}

// memFS is the in-memory file tree shared by SFTP, the SSH shell and NVUE.
// It is guarded by Switch.mu.
type memFS struct {
	files map[string]*memFile
	dirs  map[string]os.FileMode
}

func newMemFS() *memFS {
	fs := &memFS{files: map[string]*memFile{}, dirs: map[string]os.FileMode{}}
	for _, d := range []string{"/", "/host", NOSImageDir, FWImageDir, "/home", "/home/admin", "/tmp"} {
		fs.dirs[d] = 0o755
	}
	for _, c := range []string{"bmc", "erot", "fpga", "bios", "cpld", "transceiver"} {
		fs.dirs[FWImageDir+"/"+c] = 0o755
	}
	return fs
}

func cleanPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/home/admin/" + p
	}
	return path.Clean(p)
}

// writable reports whether a login user may modify p: only the trees below
// /host, /home and /tmp are writable, as on an NVOS host.
func writable(p string) bool {
	for _, r := range [...]string{"/host/", "/home/", "/tmp/"} {
		if strings.HasPrefix(p+"/", r) && p+"/" != r {
			return true
		}
	}
	return false
}

func (fs *memFS) isDir(p string) bool  { _, ok := fs.dirs[p]; return ok }
func (fs *memFS) isFile(p string) bool { _, ok := fs.files[p]; return ok }

// mkdirAll creates p and its parents.
func (fs *memFS) mkdirAll(p string, mode os.FileMode) error {
	if fs.isFile(p) {
		return os.ErrExist
	}
	if fs.isDir(p) {
		return nil
	}
	if !writable(p) {
		return os.ErrPermission
	}
	if err := fs.mkdirAll(path.Dir(p), mode); err != nil {
		return err
	}
	fs.dirs[p] = mode
	return nil
}

// create truncates or creates a regular file whose parent must exist.
func (fs *memFS) create(p string, mode os.FileMode, now time.Time) (*memFile, error) {
	if fs.isDir(p) {
		return nil, os.ErrExist
	}
	if !writable(p) {
		return nil, os.ErrPermission
	}
	if !fs.isDir(path.Dir(p)) {
		return nil, os.ErrNotExist
	}
	f := &memFile{mode: mode, mtime: now}
	fs.files[p] = f
	return f, nil
}

func (fs *memFS) remove(p string) error {
	if _, ok := fs.files[p]; !ok {
		return os.ErrNotExist
	}
	if !writable(p) {
		return os.ErrPermission
	}
	delete(fs.files, p)
	return nil
}

func (fs *memFS) rmdir(p string) error {
	if !fs.isDir(p) {
		return os.ErrNotExist
	}
	if !writable(p) {
		return os.ErrPermission
	}
	if len(fs.list(p)) > 0 {
		return os.ErrExist
	}
	delete(fs.dirs, p)
	return nil
}

// rename moves a regular file.
func (fs *memFS) rename(from, to string) error {
	f, ok := fs.files[from]
	if !ok {
		return os.ErrNotExist
	}
	if !writable(from) || !writable(to) {
		return os.ErrPermission
	}
	if !fs.isDir(path.Dir(to)) {
		return os.ErrNotExist
	}
	delete(fs.files, from)
	fs.files[to] = f
	return nil
}

// removeTree deletes p and everything below it (used by factory reset).
func (fs *memFS) removeTree(p string) {
	for name := range fs.files {
		if strings.HasPrefix(name, p+"/") {
			delete(fs.files, name)
		}
	}
	for name := range fs.dirs {
		if strings.HasPrefix(name, p+"/") {
			delete(fs.dirs, name)
		}
	}
}

// stat describes p.
func (fs *memFS) stat(p string) (os.FileInfo, error) {
	if f, ok := fs.files[p]; ok {
		return fileInfo{name: path.Base(p), size: int64(len(f.data)), mode: f.mode, mtime: f.mtime}, nil
	}
	if m, ok := fs.dirs[p]; ok {
		return fileInfo{name: path.Base(p), mode: m | os.ModeDir}, nil
	}
	return nil, os.ErrNotExist
}

// list returns the direct children of directory p, sorted by name.
func (fs *memFS) list(p string) []os.FileInfo {
	prefix := strings.TrimSuffix(p, "/") + "/"
	var out []os.FileInfo
	for name := range fs.files {
		if strings.HasPrefix(name, prefix) && !strings.Contains(name[len(prefix):], "/") {
			fi, _ := fs.stat(name)
			out = append(out, fi)
		}
	}
	for name := range fs.dirs {
		if name != "/" && strings.HasPrefix(name, prefix) && !strings.Contains(name[len(prefix):], "/") {
			fi, _ := fs.stat(name)
			out = append(out, fi)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// fileInfo is an immutable os.FileInfo snapshot.
type fileInfo struct {
	name  string
	size  int64
	mode  os.FileMode
	mtime time.Time
}

// The os.FileInfo methods.
func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() os.FileMode  { return fi.mode }
func (fi fileInfo) ModTime() time.Time { return fi.mtime }
func (fi fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi fileInfo) Sys() any           { return nil }

package hostsim

import (
	"bytes"
	"io"
	"os"
	"path"
	"time"

	"github.com/pkg/sftp"

	"github.com/rmsd/rmsd/hw/sim/simssh"
)

// fs serves the host's in-memory files to pkg/sftp: enough for an upload
// (open, write, close, stat) and a removal.
type fs struct{ h *Host }

func (h *Host) sftpHandlers() sftp.Handlers {
	f := fs{h: h}
	return sftp.Handlers{FileGet: f, FilePut: f, FileCmd: f, FileList: f}
}

// Fileread opens a file for reading.
func (f fs) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	b, ok := f.h.files[path.Clean(r.Filepath)]
	if !ok {
		return nil, sftp.ErrSSHFxNoSuchFile
	}
	return bytes.NewReader(append([]byte(nil), b...)), nil
}

// Filewrite creates (or truncates) a file in an existing directory.
func (f fs) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	p := path.Clean(r.Filepath)
	if !f.h.dirs[path.Dir(p)] {
		return nil, sftp.ErrSSHFxNoSuchFile
	}
	if _, ok := f.h.files[p]; !ok || r.Pflags().Trunc {
		f.h.files[p] = nil
	}
	return writer{h: f.h, path: p}, nil
}

// Filecmd removes files; other commands are accepted without effect.
func (f fs) Filecmd(r *sftp.Request) error {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	if r.Method == "Remove" {
		p := path.Clean(r.Filepath)
		if _, ok := f.h.files[p]; !ok {
			return sftp.ErrSSHFxNoSuchFile
		}
		delete(f.h.files, p)
	}
	return nil
}

// Filelist answers Stat.
func (f fs) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	p := path.Clean(r.Filepath)
	switch {
	case r.Method != "Stat" && r.Method != "Lstat":
		return nil, sftp.ErrSSHFxOpUnsupported
	case f.h.dirs[p]:
		return simssh.FileList{info{name: path.Base(p), dir: true}}, nil
	}
	b, ok := f.h.files[p]
	if !ok {
		return nil, sftp.ErrSSHFxNoSuchFile
	}
	return simssh.FileList{info{name: path.Base(p), size: int64(len(b))}}, nil
}

type writer struct {
	h    *Host
	path string
}

// WriteAt stores p at off.
func (w writer) WriteAt(p []byte, off int64) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	b := w.h.files[w.path]
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = append(b, make([]byte, end-int64(len(b)))...)
	}
	copy(b[off:], p)
	w.h.files[w.path] = b
	return len(p), nil
}

type info struct {
	name string
	size int64
	dir  bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }

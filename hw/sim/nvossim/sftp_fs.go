package nvossim

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"

	"github.com/rmsd/rmsd/hw/sim/simssh"

	"github.com/pkg/sftp"
)

// sftpFS serves the switch's in-memory file system to pkg/sftp.
type sftpFS struct{ sw *Switch }

func (s *Switch) sftpHandlers() sftp.Handlers {
	fs := sftpFS{sw: s}
	return sftp.Handlers{FileGet: fs, FilePut: fs, FileCmd: fs, FileList: fs}
}

// sftpErr maps file-system errors to SFTP status codes.
func sftpErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrNotExist):
		return sftp.ErrSSHFxNoSuchFile
	case errors.Is(err, os.ErrPermission):
		return sftp.ErrSSHFxPermissionDenied
	default:
		return sftp.ErrSSHFxFailure
	}
}

// Fileread opens a file for reading (a snapshot of its content).
func (h sftpFS) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	h.sw.mu.Lock()
	defer h.sw.mu.Unlock()
	f, ok := h.sw.fs.files[cleanPath(r.Filepath)]
	if !ok {
		return nil, sftp.ErrSSHFxNoSuchFile
	}
	return bytes.NewReader(append([]byte(nil), f.data...)), nil
}

// Filewrite opens a file for writing with the request's open flags.
func (h sftpFS) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	h.sw.mu.Lock()
	defer h.sw.mu.Unlock()
	p := cleanPath(r.Filepath)
	flags := r.Pflags()
	f, ok := h.sw.fs.files[p]
	switch {
	case ok && flags.Excl && flags.Creat:
		return nil, sftp.ErrSSHFxFailure
	case ok && !writable(p):
		return nil, sftp.ErrSSHFxPermissionDenied
	case ok && flags.Trunc:
		f.data = f.data[:0]
	case !ok && !flags.Creat:
		return nil, sftp.ErrSSHFxNoSuchFile
	case !ok:
		var err error
		if f, err = h.sw.fs.create(p, 0o644, h.sw.now()); err != nil {
			return nil, sftpErr(err)
		}
	}
	return &sftpWriter{sw: h.sw, f: f}, nil
}

// Filecmd runs setstat, rename, mkdir, rmdir and remove.
func (h sftpFS) Filecmd(r *sftp.Request) error {
	h.sw.mu.Lock()
	defer h.sw.mu.Unlock()
	p := cleanPath(r.Filepath)
	fs := h.sw.fs
	switch r.Method {
	case "Setstat":
		if !fs.isFile(p) && !fs.isDir(p) {
			return sftp.ErrSSHFxNoSuchFile
		}
		return nil
	case "Rename", "PosixRename":
		return sftpErr(fs.rename(p, cleanPath(r.Target)))
	case "Mkdir":
		if fs.isDir(p) || fs.isFile(p) {
			return sftp.ErrSSHFxFailure
		}
		if !fs.isDir(path.Dir(p)) {
			return sftp.ErrSSHFxNoSuchFile
		}
		return sftpErr(fs.mkdirAll(p, 0o755))
	case "Rmdir":
		return sftpErr(fs.rmdir(p))
	case "Remove":
		return sftpErr(fs.remove(p))
	}
	return sftp.ErrSSHFxOpUnsupported
}

// Filelist answers List and Stat.
func (h sftpFS) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	h.sw.mu.Lock()
	defer h.sw.mu.Unlock()
	p := cleanPath(r.Filepath)
	switch r.Method {
	case "List":
		if !h.sw.fs.isDir(p) {
			return nil, sftp.ErrSSHFxNoSuchFile
		}
		return simssh.FileList(h.sw.fs.list(p)), nil
	case "Stat", "Lstat":
		fi, err := h.sw.fs.stat(p)
		if err != nil {
			return nil, sftpErr(err)
		}
		return simssh.FileList{fi}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}

// sftpWriter writes into one memFile, honouring the stall fault.
type sftpWriter struct {
	sw *Switch
	f  *memFile
}

// WriteAt stores p at off; while uploads are stalled past their threshold
// it blocks until ResumeUploads or Close.
func (w *sftpWriter) WriteAt(p []byte, off int64) (int, error) {
	s := w.sw
	s.mu.Lock()
	for s.stallAfter >= 0 && off+int64(len(p)) > s.stallAfter {
		resume := s.stallResume
		s.mu.Unlock()
		select {
		case <-resume:
		case <-s.done:
			return 0, sftp.ErrSSHFxConnectionLost
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	now := s.now()
	s.advanceLocked(now)
	if s.downLocked(now) {
		return 0, sftp.ErrSSHFxConnectionLost // the switch is rebooting
	}
	end := off + int64(len(p))
	if end > int64(len(w.f.data)) {
		if end > int64(cap(w.f.data)) {
			grown := make([]byte, end, max(end, 2*int64(cap(w.f.data))))
			copy(grown, w.f.data)
			w.f.data = grown
		} else {
			w.f.data = w.f.data[:end]
		}
	}
	copy(w.f.data[off:], p)
	w.f.mtime = s.now()
	return len(p), nil
}

package simssh

import (
	"io"
	"os"
)

// FileList answers an SFTP directory listing (sftp.ListerAt) from a slice
// of entries.
type FileList []os.FileInfo

// ListAt copies entries from offset into ls; io.EOF once the end is reached.
func (l FileList) ListAt(ls []os.FileInfo, offset int64) (int, error) {
	if offset >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(ls, l[offset:])
	if n < len(ls) {
		return n, io.EOF
	}
	return n, nil
}

package download

import (
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// Check refuses, before any transfer, the artifacts whose local source
// cannot be copied: a file source without Options.SourceRoot, outside it
// (confine rules) or not a regular file. A caller adding a firmware object
// runs it to answer INVALID_ARGUMENT at once instead of failing the
// download later. Remote sources are not contacted. It returns an *Error
// like Download's, or nil.
func (d *Downloader) Check(artifacts []manifest.Artifact) error {
	var failed []*ArtifactError
	for _, a := range artifacts {
		if a.Source.Kind != manifest.SourceFile {
			continue
		}
		f, _, err := d.openFile(a.Source) // the open a download makes
		if err != nil {
			failed = append(failed, &ArtifactError{Name: a.Name, Source: a.Source.String(), Err: err})
			continue
		}
		f.Close()
	}
	if len(failed) > 0 {
		return &Error{Failed: failed, Total: len(artifacts)}
	}
	return nil
}

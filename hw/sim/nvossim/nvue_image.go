package nvossim

import (
	"net/http"
	"strconv"
	"time"
)

func partitionName(n int) string { return "partition" + strconv.Itoa(n) }

func (s *Switch) getImage(q *nvueReq) reply {
	out := map[string]any{"current": partitionName(s.current), "next": partitionName(s.next)}
	for n := 1; n <= 2; n++ {
		p := map[string]any{}
		if b := s.partitionBuild(n); b != "" {
			p["build-id"] = b
		}
		out[partitionName(n)] = p
	}
	return reply{http.StatusOK, out}
}

func (s *Switch) getImageFiles(q *nvueReq) reply {
	return reply{http.StatusOK, s.fileListingLocked(NOSImageDir)}
}

// other returns the non-current partition number.
func (s *Switch) otherLocked() int { return 3 - s.current }

// postImageUninstall clears the non-current partition.
func (s *Switch) postImageUninstall(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "uninstall"); !ok {
		return errReply(http.StatusBadRequest, "expected an @uninstall action")
	}
	a := s.startActionLocked(q.now, s.cfg.ActionDuration/4, "Uninstalling image", "Image uninstalled",
		func(time.Time) string {
			other := s.otherLocked()
			if s.partitions[other-1] == "" {
				return "Nothing to uninstall"
			}
			s.partitions[other-1] = ""
			s.next = s.current
			return ""
		})
	return actionAccepted(a)
}

// postImageInstall writes a staged image to the non-current partition and
// reboots into it: the action succeeds with reboot wording, the switch goes
// down RebootDelay later and comes back with current = next = new build.
func (s *Switch) postImageInstall(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "install"); !ok {
		return errReply(http.StatusBadRequest, "expected an @install action")
	}
	file := q.r.PathValue("file")
	path := NOSImageDir + "/" + file
	if !s.fs.isFile(path) {
		return errReply(http.StatusNotFound, "image file "+path+" not found")
	}
	build := "nvos-" + versionFromFile(file)
	if s.imageFaults.installFailure != "" {
		a := s.startActionLocked(q.now, s.cfg.ImageInstallDuration, "Installing image "+file, "", nil)
		a.failMsg = s.imageFaults.installFailure
		return actionAccepted(a)
	}
	a := s.startActionLocked(q.now, s.cfg.ImageInstallDuration, "Installing image "+file,
		"Image installed, system is offline during reboot",
		func(end time.Time) string {
			if !s.fs.isFile(path) {
				return "image file " + path + " disappeared during install"
			}
			other := s.otherLocked()
			s.partitions[other-1] = build
			s.next = other
			s.imageRebootLocked(end.Add(s.cfg.scale(s.cfg.RebootDelay)), func() {
				s.current = s.next
				if s.cfg.ExpirePasswordOnInstall || s.imageFaults.expireAdmin {
					s.users["admin"] = &user{password: "admin", expired: true}
				}
			})
			return ""
		})
	return actionAccepted(a)
}

// postFactoryReset restores the factory login (admin/admin, expired),
// drops revisions and user files, and reboots.
func (s *Switch) postFactoryReset(q *nvueReq) reply {
	if _, ok := actionParams(q.body, "reset"); !ok {
		return errReply(http.StatusBadRequest, "expected a @reset action")
	}
	a := s.startActionLocked(q.now, 0, "Factory reset scheduled", "Factory reset started, system is offline during reboot",
		func(end time.Time) string {
			s.rebootLocked(end.Add(s.cfg.scale(s.cfg.RebootDelay)), func() {
				s.users = map[string]*user{"admin": {password: "admin", expired: true}}
				s.revisions = map[string]*revision{}
				s.fs.removeTree("/home/admin")
				s.fs.removeTree("/tmp")
			})
			return ""
		})
	a.failMsg = ""
	return actionAccepted(a)
}

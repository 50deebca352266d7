package console

import (
	"net/http"
	"net/url"
	"regexp"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/store"
)

// firmwareView is the firmware page's data.
type firmwareView struct {
	Available bool
	Objects   []firmwareObject
}

// firmwareObject is one catalog entry without its manifest text.
type firmwareObject struct {
	catalog.Object
	Artifacts []firmwareArtifact
}

// firmwareArtifact is an artifact with its location stripped of any
// credentials.
type firmwareArtifact struct {
	store.Artifact
	Where string
}

// redactLocation drops a URL's user information and query (where tokens
// travel); a local path is shown as it is.
func redactLocation(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme == "" {
		return loc
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func (c *Console) firmware(w http.ResponseWriter, r *http.Request) {
	v := firmwareView{}
	events := ""
	if c.deps.Catalog != nil {
		events = Prefix + "events?topic=firmware"
		objs, err := c.deps.Catalog.List(r.Context(), store.ObjectFilter{})
		if err != nil {
			c.fail(w, r, http.StatusServiceUnavailable, "the firmware catalog did not answer", err)
			return
		}
		v.Available = true
		for _, o := range objs {
			fo := firmwareObject{Object: o}
			for _, a := range o.FirmwareObject.Artifacts {
				fo.Artifacts = append(fo.Artifacts, firmwareArtifact{Artifact: a, Where: redactLocation(a.Location)})
			}
			v.Objects = append(v.Objects, fo)
		}
	}
	c.render(w, r, "firmware", view{Title: "Firmware catalog", Events: events, Data: v})
}

// userinfo matches the user information of a URL inside free text.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]*@`)

// redactText drops the user information of every URL in s: a download
// error quotes the location it failed on.
func redactText(s string) string { return userinfo.ReplaceAllString(s, "$1") }

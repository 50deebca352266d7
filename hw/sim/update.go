package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// FirmwareMagic starts a simulator firmware file that names its version:
// "SIMFW <version>\n...". Any other file gets its version from its file
// name (multipart) or its content hash (raw push).
const FirmwareMagic = nvossim.PackageMagic

const (
	inventoryURI = "/redfish/v1/UpdateService/FirmwareInventory"
	tasksURI     = "/redfish/v1/TaskService/Tasks"
)

func (d *Device) getUpdateService(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	apply := d.state.applyTime
	d.mu.Unlock()
	us := obj{
		"@odata.id": "/redfish/v1/UpdateService", "@odata.type": "#UpdateService.v1_11_0.UpdateService",
		"Id": "UpdateService", "Name": "Update Service", "ServiceEnabled": true,
		"FirmwareInventory": ref(inventoryURI),
	}
	if d.isShelf() {
		us["HttpPushUri"] = "/redfish/v1/UpdateService/update"
		us["HttpPushUriOptions"] = obj{"HttpPushUriApplyTime": obj{"ApplyTime": apply}}
	} else {
		us["MultipartHttpPushUri"] = "/redfish/v1/UpdateService/update-multipart"
	}
	writeJSON(w, http.StatusOK, us)
}

func (d *Device) patchUpdateService(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Options *struct {
			ApplyTime *struct {
				ApplyTime string `json:"ApplyTime"`
			} `json:"HttpPushUriApplyTime"`
		} `json:"HttpPushUriOptions"`
	}
	if err := readJSON(r, &body); err != nil {
		badRequest(w, "malformed JSON body")
		return
	}
	if !d.isShelf() || body.Options == nil || body.Options.ApplyTime == nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyNotWritable", "only HttpPushUriOptions.HttpPushUriApplyTime.ApplyTime is writable")
		return
	}
	at := body.Options.ApplyTime.ApplyTime
	if at != "Immediate" && at != "OnReset" {
		badRequest(w, "ApplyTime "+at+" is not supported")
		return
	}
	d.mu.Lock()
	d.state.applyTime = at
	d.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (d *Device) getInventory(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	uris := make([]string, len(d.state.order))
	for i, id := range d.state.order {
		uris[i] = inventoryURI + "/" + id
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, collectionOf(inventoryURI, "#SoftwareInventoryCollection.SoftwareInventoryCollection",
		"Firmware Inventory Collection", uris))
}

func (d *Device) getInventoryItem(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d.lockNow()
	c := d.state.components[id]
	var item obj
	if c != nil {
		item = obj{
			"@odata.id": inventoryURI + "/" + id, "@odata.type": "#SoftwareInventory.v1_9_0.SoftwareInventory",
			"Id": id, "Name": c.name, "Description": c.name, "Version": c.installed, "SoftwareId": c.softwareID,
			"Updateable": true, "WriteProtected": false, "Status": obj{"State": "Enabled", "Health": "OK"},
		}
	}
	d.mu.Unlock()
	if item == nil {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, item)
}

// upload is what an accepted firmware file tells the device.
type upload struct {
	targets []string // component ids
	version string
}

// readFirmware streams a firmware file, returning its version and size.
// The file is hashed only when neither its header nor its name gives the
// version: a large package named by its header costs one pass that keeps
// nothing (the simulator must not be the bottleneck of an upload).
func readFirmware(r io.Reader, fileName string) (string, int64, error) {
	br := bufio.NewReader(r)
	peek, _ := br.Peek(128) // a short file simply peeks less
	version := namedVersion(string(peek), fileName)
	if version != "" {
		n, err := io.Copy(io.Discard, br)
		return version, n, err
	}
	h := sha256.New()
	n, err := io.Copy(h, br)
	if err != nil {
		return "", n, err
	}
	return "sha256-" + hex.EncodeToString(h.Sum(nil))[:12], n, nil
}

// namedVersion is the version a firmware file names: the one after
// FirmwareMagic in its head, else its file name without the package
// extensions; "" when it names none.
func namedVersion(head, fileName string) string {
	if strings.HasPrefix(head, FirmwareMagic) {
		v := strings.TrimPrefix(head, FirmwareMagic)
		if i := strings.IndexAny(v, " \r\n\t"); i >= 0 {
			v = v[:i]
		}
		if v != "" {
			return v
		}
	}
	if fileName == "" {
		return ""
	}
	base := filepath.Base(fileName)
	for _, ext := range []string{".gz", ".tar", ".fwpkg", ".pldm", ".bin", ".tgz"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// targetsOf maps UpdateParameters.Targets onto component ids.
func (d *Device) targetsOfLocked(targets []string) ([]string, error) {
	if len(targets) == 0 {
		return []string{"FW_BMC_0"}, nil
	}
	var out []string
	for _, t := range targets {
		switch {
		case strings.HasPrefix(t, inventoryURI+"/"):
			id := strings.TrimPrefix(t, inventoryURI+"/")
			if d.state.components[id] == nil {
				return nil, errors.New("unknown update target " + t)
			}
			out = append(out, id)
		case t == "/redfish/v1/Chassis/HGX_Chassis_0" && d.kind == kindCompute:
			for _, id := range d.state.order {
				if strings.HasPrefix(id, "HGX_") {
					out = append(out, id)
				}
			}
		default:
			return nil, errors.New("unknown update target " + t)
		}
	}
	return out, nil
}

func (d *Device) postMultipart(w http.ResponseWriter, r *http.Request) {
	if d.isShelf() {
		notFound(w, r)
		return
	}
	if r.ContentLength < 0 {
		// Like bmcweb, the simulated BMC refuses chunked uploads.
		writeError(w, http.StatusLengthRequired, "Base.1.0.GeneralError", "Content-Length is required for firmware uploads.")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		badRequest(w, "multipart/form-data body required")
		return
	}
	var params struct {
		Targets     []string `json:"Targets"`
		ForceUpdate bool     `json:"ForceUpdate"`
	}
	gotParams, version, size := false, "", int64(0)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			badRequest(w, "malformed multipart body")
			return
		}
		switch part.FormName() {
		case "UpdateParameters":
			if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&params); err != nil {
				badRequest(w, "UpdateParameters is not valid JSON")
				return
			}
			gotParams = true
		case "UpdateFile":
			if version, size, err = readFirmware(part, part.FileName()); err != nil {
				badRequest(w, "could not read UpdateFile")
				return
			}
		default:
			_, _ = io.Copy(io.Discard, part)
		}
	}
	if !gotParams || size == 0 {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing",
			"UpdateParameters and a non-empty UpdateFile are required.")
		return
	}
	now := d.lockNow()
	defer d.mu.Unlock()
	ids, err := d.targetsOfLocked(params.Targets)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	t := d.newTaskLocked(now, d.opts.Timing.ComputeFlash, upload{targets: ids, version: version}, "")
	d.acceptTask(w, t)
}

func (d *Device) postRawPush(w http.ResponseWriter, r *http.Request) {
	if !d.isShelf() {
		notFound(w, r)
		return
	}
	if r.ContentLength < 0 {
		writeError(w, http.StatusLengthRequired, "Base.1.0.GeneralError", "Content-Length is required for firmware uploads.")
		return
	}
	version, size, err := readFirmware(r.Body, "")
	if err != nil || size == 0 {
		badRequest(w, "a non-empty firmware image is required")
		return
	}
	now := d.lockNow()
	defer d.mu.Unlock()
	activate := ""
	if d.state.applyTime != "OnReset" {
		activate = "now"
	}
	t := d.newTaskLocked(now, d.opts.Timing.ShelfFlash, upload{targets: []string{"FW_PMC_0"}, version: version}, activate)
	if activate == "now" && !t.fail {
		// An immediate install reboots the shelf controller when it ends.
		d.afterLocked(t.end.Sub(now), func() {
			d.settleLocked(time.Now())
			d.rebootLocked(0, d.opts.scale(d.opts.Timing.ShelfReboot), nil)
		})
	}
	d.acceptTask(w, t)
}

// newTaskLocked creates a firmware task lasting the (scaled, possibly
// slowed) flash time; the failure fault decides its outcome now.
func (d *Device) newTaskLocked(now time.Time, flash time.Duration, u upload, activate string) *task {
	s := &d.state
	dur := d.opts.scale(flash)
	if d.slow > 0 {
		dur = time.Duration(float64(dur) * d.slow)
	}
	fail := d.failAll || d.failN > 0
	if d.failN > 0 {
		d.failN--
	}
	id := strconv.Itoa(s.nextTask)
	s.nextTask++
	t := &task{id: id, start: now, end: now.Add(dur), fail: fail, targets: u.targets, version: u.version,
		activate: activate, handoff: d.handoff && d.isShelf() && activate == ""}
	s.tasks[id] = t
	s.taskOrder = append(s.taskOrder, id)
	s.uploads++
	d.log.Info().Str("task", id).Strs("targets", u.targets).Str("version", u.version).Msg("firmware upload accepted")
	return t
}

func (d *Device) acceptTask(w http.ResponseWriter, t *task) {
	uri := tasksURI + "/" + t.id
	w.Header().Set("Location", uri)
	writeJSON(w, http.StatusAccepted, obj{
		"@odata.id": uri, "@odata.type": "#Task.v1_4_3.Task", "Id": t.id, "TaskState": "Running",
		"TaskStatus": "OK", "Messages": []obj{},
	})
}

func (d *Device) getTaskService(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": "/redfish/v1/TaskService", "@odata.type": "#TaskService.v1_2_0.TaskService",
		"Id": "TaskService", "Name": "Task Service", "ServiceEnabled": true, "Tasks": ref(tasksURI),
	})
}

func (d *Device) getTasks(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	ids := append([]string(nil), d.state.taskOrder...)
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, collectionOfIDs(tasksURI, "#TaskCollection.TaskCollection", "Task Collection", ids))
}

func (d *Device) getTask(w http.ResponseWriter, r *http.Request) {
	now := d.lockNow()
	t := d.state.tasks[r.PathValue("id")]
	var body obj
	if t != nil {
		body = taskJSON(t, now)
	}
	d.mu.Unlock()
	if body == nil {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// taskJSON renders a task as of now.
func taskJSON(t *task, now time.Time) obj {
	const layout = time.RFC3339
	body := obj{
		"@odata.id": tasksURI + "/" + t.id, "@odata.type": "#Task.v1_4_3.Task",
		"Id": t.id, "Name": "Task " + t.id, "StartTime": t.start.UTC().Format(layout),
	}
	started := obj{"MessageId": "TaskEvent.1.0.TaskStarted", "Message": "The task with Id '" + t.id + "' has started.",
		"Severity": "OK", "MessageArgs": []string{t.id}}
	switch {
	case now.Before(t.end):
		total := t.end.Sub(t.start)
		pct := 0
		if total > 0 {
			pct = int(100 * now.Sub(t.start) / total)
		}
		if pct > 99 {
			pct = 99
		}
		body["TaskState"], body["TaskStatus"], body["PercentComplete"] = "Running", "OK", pct
		body["Messages"] = []obj{started}
	case t.fail:
		body["TaskState"], body["TaskStatus"], body["PercentComplete"] = "Exception", "Critical", 100
		body["EndTime"] = t.end.UTC().Format(layout)
		body["Messages"] = []obj{started, {
			"MessageId": "Update.1.0.ApplyFailed", "Severity": "Critical",
			"Message":    "Installation of " + t.version + " on " + strings.Join(t.targets, ",") + " failed.",
			"Resolution": "Retry the update; if it fails again, replace the component.",
		}}
	case t.handoff:
		// LiteOn shelves end a staged (OnReset) update like this: aborted at
		// 100 %, waiting for the manager reset.
		body["TaskState"], body["TaskStatus"], body["PercentComplete"] = "Cancelled", "Warning", 100
		body["EndTime"] = t.end.UTC().Format(layout)
		body["Messages"] = []obj{started, {
			"MessageId": "TaskEvent.1.0.TaskAborted", "Severity": "Warning",
			"Message": "The task with Id '" + t.id + "' was aborted: image staged, activation pending reset.",
		}}
	default:
		body["TaskState"], body["TaskStatus"], body["PercentComplete"] = "Completed", "OK", 100
		body["EndTime"] = t.end.UTC().Format(layout)
		body["Messages"] = []obj{started, {
			"MessageId": "TaskEvent.1.0.TaskCompletedOK", "Severity": "OK",
			"Message": "The task with Id '" + t.id + "' has completed.", "MessageArgs": []string{t.id},
		}}
	}
	return body
}

package sim

import (
	"encoding/json"
	"io"
	"net/http"
)

// obj is a Redfish JSON object.
type obj = map[string]any

func ref(id string) obj { return obj{"@odata.id": id} }

func collectionOf(id, odataType, name string, members []string) obj {
	ms := make([]obj, 0, len(members))
	for _, m := range members {
		ms = append(ms, ref(m))
	}
	return obj{"@odata.id": id, "@odata.type": odataType, "Name": name,
		"Members": ms, "Members@odata.count": len(ms)}
}

// collectionOfIDs is collectionOf with members base/<id> for each id.
func collectionOfIDs(base, odataType, name string, ids []string) obj {
	uris := make([]string, len(ids))
	for i, id := range ids {
		uris[i] = base + "/" + id
	}
	return collectionOf(base, odataType, name, uris)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a vanished client is not our problem
}

// writeError answers with a Redfish error body.
func writeError(w http.ResponseWriter, status int, msgID, msg string) {
	writeJSON(w, status, obj{"error": obj{
		"code":    msgID,
		"message": msg,
		"@Message.ExtendedInfo": []obj{{
			"MessageId": msgID, "Message": msg, "Severity": "Critical",
		}},
	}})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI",
		"The resource at the URI "+r.URL.Path+" was not found.")
}

func badRequest(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", msg)
}

// readJSON decodes a small JSON request body.
func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	if len(b) == 0 {
		b = []byte("{}")
	}
	return json.Unmarshal(b, v)
}

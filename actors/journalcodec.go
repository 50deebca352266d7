package actors

import (
	"encoding/json"
	"fmt"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// The journal's encoding. A journal row (store.Event) holds a JSON array of
// tagged events, {"k": "<event kind>", "e": {...}}, each event in the json
// form messages declares; one row holds at most eventsPerRow events, so a
// 1,000-child admission is a few rows. A change of the encoding gets a new
// row kind; a row of a kind this rmsd does not know fails the start
// instead of being skipped.
//
// Rows leave out the events that others imply, half of a job's: a job's
// attachment to its parent and the hold of its own node (both implied by
// its JobCreated), and the release of its holds (implied by its terminal
// event). Replay puts them back (expandImplied).
const (
	journalKind  = "jobs.v1"
	eventsPerRow = 512
)

// taggedEvent is one event in a journal row.
type taggedEvent struct {
	Kind  string          `json:"k"`
	Event json.RawMessage `json:"e"`
}

// eventKind names an event's type in the journal.
func eventKind(ev messages.Event) (string, error) {
	switch ev.(type) {
	case messages.JobCreated:
		return "JobCreated", nil
	case messages.ChildAttached:
		return "ChildAttached", nil
	case messages.JobStarted:
		return "JobStarted", nil
	case messages.JobProgressed:
		return "JobProgressed", nil
	case messages.JobCompleted:
		return "JobCompleted", nil
	case messages.JobFailed:
		return "JobFailed", nil
	case messages.NodeLocked:
		return "NodeLocked", nil
	case messages.NodeReleased:
		return "NodeReleased", nil
	case messages.JobEvicted:
		return "JobEvicted", nil
	case messages.JobRestored:
		return "JobRestored", nil
	default:
		return "", fmt.Errorf("journal: event %T has no journal kind", ev)
	}
}

// decodeEvent is eventKind's inverse.
func decodeEvent(kind string, data []byte) (messages.Event, error) {
	switch kind {
	case "JobCreated":
		return decodeAs[messages.JobCreated](data)
	case "ChildAttached":
		return decodeAs[messages.ChildAttached](data)
	case "JobStarted":
		return decodeAs[messages.JobStarted](data)
	case "JobProgressed":
		return decodeAs[messages.JobProgressed](data)
	case "JobCompleted":
		return decodeAs[messages.JobCompleted](data)
	case "JobFailed":
		return decodeAs[messages.JobFailed](data)
	case "NodeLocked":
		return decodeAs[messages.NodeLocked](data)
	case "NodeReleased":
		return decodeAs[messages.NodeReleased](data)
	case "JobEvicted":
		return decodeAs[messages.JobEvicted](data)
	case "JobRestored":
		return decodeAs[messages.JobRestored](data)
	default:
		return nil, fmt.Errorf("journal: unknown event kind %q", kind)
	}
}

func decodeAs[E messages.Event](data []byte) (messages.Event, error) {
	var e E
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("journal: decode %T: %w", e, err)
	}
	return e, nil
}

// encodeRows encodes events into journal rows of at most eventsPerRow
// events each, in order; each row's Jobs names the jobs its JobCreated
// events create (a rack's journal indexes them). A row is assembled from the events' own
// encodings: the same bytes json.Marshal of []taggedEvent gives (kinds are
// plain identifiers, events are compact), without encoding/json checking
// and compacting every event a second time.
func encodeRows(evs []messages.Event) ([]store.Event, error) {
	rows := make([]store.Event, 0, (len(evs)+eventsPerRow-1)/eventsPerRow)
	for len(evs) > 0 {
		n := min(len(evs), eventsPerRow)
		data := make([]byte, 0, 160*n)
		data = append(data, '[')
		var jobs []string
		for i, ev := range evs[:n] {
			kind, err := eventKind(ev)
			if err != nil {
				return nil, err
			}
			if c, ok := ev.(messages.JobCreated); ok {
				jobs = append(jobs, c.ID)
			}
			e, err := json.Marshal(ev)
			if err != nil {
				return nil, fmt.Errorf("journal: encode %s: %w", kind, err)
			}
			if i > 0 {
				data = append(data, ',')
			}
			data = append(data, `{"k":"`...)
			data = append(data, kind...)
			data = append(data, `","e":`...)
			data = append(data, e...)
			data = append(data, '}')
		}
		data = append(data, ']')
		rows = append(rows, store.Event{Kind: journalKind, Data: data, Jobs: jobs})
		evs = evs[n:]
	}
	return rows, nil
}

// decodeRow returns the events of one journal row, in order (without the
// implied ones: see expandImplied).
func decodeRow(row store.Event) ([]messages.Event, error) {
	if row.Kind != journalKind {
		return nil, fmt.Errorf("journal: row %d has kind %q; this rmsd reads %q", row.Seq, row.Kind, journalKind)
	}
	var tagged []taggedEvent
	if err := json.Unmarshal(row.Data, &tagged); err != nil {
		return nil, fmt.Errorf("journal: row %d: %w", row.Seq, err)
	}
	out := make([]messages.Event, len(tagged))
	for i, t := range tagged {
		ev, err := decodeEvent(t.Kind, t.Event)
		if err != nil {
			return nil, fmt.Errorf("journal: row %d event %d: %w", row.Seq, i, err)
		}
		out[i] = ev
	}
	return out, nil
}

// ownNodeLock reports whether e, about to be applied to s, is the hold of
// a job's own node, which its JobCreated implies (a journal row leaves it
// out). A job's attachment and the release of its holds are implied too;
// journaled leaves them out without asking.
func (s *jobStore) ownNodeLock(e messages.NodeLocked) bool {
	rec, ok := s.jobs[e.Holder]
	return ok && e.Operation == "" && e.NodeID != "" && e.NodeID == rec.snap.NodeID && e.RackID == rec.snap.RackID
}

// expandImplied applies to s what a journal event implies, once ev itself
// is applied, in the order the registry applied it: after a JobCreated,
// the hold of the job's node and its attachment to its parent; after a
// terminal event, the release of every hold of the job.
func (s *jobStore) expandImplied(ev messages.Event) []error {
	var then []messages.Event
	switch e := ev.(type) {
	case messages.JobCreated:
		if e.NodeID != "" {
			then = append(then, messages.NodeLocked{RackID: e.RackID, NodeID: e.NodeID, Holder: e.ID, Since: e.At})
		}
		if e.ParentID != "" {
			then = append(then, messages.ChildAttached{ParentID: e.ParentID, ChildID: e.ID, At: e.At})
		}
	case messages.JobCompleted, messages.JobFailed:
		if rec, ok := s.jobs[ev.Subject()]; ok {
			for _, k := range rec.holds {
				then = append(then, messages.NodeReleased{RackID: k.rack, NodeID: k.node, Holder: rec.snap.ID})
			}
		}
	}
	var errs []error
	for _, t := range then {
		if err := s.apply(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

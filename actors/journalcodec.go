package actors

import (
	"encoding/json"
	"fmt"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// The journal's encoding. A journal row (store.Event) of kind journalKind
// holds a JSON array of tagged events, {"k": "<event kind>", "e": {...}},
// each event in the json form messages declares; one row holds at most
// eventsPerRow events, so a 1,000-child admission is a few rows. A change
// of the encoding gets a new row kind; a row of a kind this rmsd does not
// know fails the start instead of being skipped.
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
// events each, in order.
func encodeRows(evs []messages.Event) ([]store.Event, error) {
	rows := make([]store.Event, 0, (len(evs)+eventsPerRow-1)/eventsPerRow)
	for len(evs) > 0 {
		n := min(len(evs), eventsPerRow)
		tagged := make([]taggedEvent, n)
		for i, ev := range evs[:n] {
			kind, err := eventKind(ev)
			if err != nil {
				return nil, err
			}
			data, err := json.Marshal(ev)
			if err != nil {
				return nil, fmt.Errorf("journal: encode %s: %w", kind, err)
			}
			tagged[i] = taggedEvent{Kind: kind, Event: data}
		}
		data, err := json.Marshal(tagged)
		if err != nil {
			return nil, fmt.Errorf("journal: encode row: %w", err)
		}
		rows = append(rows, store.Event{Kind: journalKind, Data: data})
		evs = evs[n:]
	}
	return rows, nil
}

// decodeRow returns the events of one journal row, in order.
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

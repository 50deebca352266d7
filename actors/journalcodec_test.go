package actors

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// TestJournalRowsAreTheTaggedArrayAndReadBack: a row assembled by
// encodeRows is byte for byte what encoding/json gives for the tagged
// array (journals written before the assembly read the same), spans rows
// at eventsPerRow, and decodes to the events it was given.
func TestJournalRowsAreTheTaggedArrayAndReadBack(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123, time.UTC)
	kinds := []messages.Event{
		messages.JobCreated{ID: "j1", Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n", State: messages.StateQueued, Description: `say "hi" <&>`, At: at},
		messages.ChildAttached{ParentID: "p", ChildID: "j1", At: at},
		messages.JobStarted{ID: "j1", Description: "Running", At: at},
		messages.JobProgressed{ID: "j1", Description: "ünïcode", At: at},
		messages.JobCompleted{ID: "j1", Description: "done", ResultJSON: `{"status":"completed"}`, At: at},
		messages.JobFailed{ID: "j2", Code: messages.ErrorInternal, Message: "line\nbreak", At: at},
		messages.NodeLocked{RackID: "r", NodeID: "n", Holder: "j1", Since: at, Devices: []string{"bmc 10.0.0.5:443", "host [fd00::5]"}},
		messages.NodeReleased{RackID: "r", NodeID: "n", Holder: "j1"},
		messages.JobEvicted{ID: "j2"},
		messages.JobRestored{Job: messages.JobSnapshot{ID: "j3", State: messages.StateCompleted, CreatedAt: at}, Index: 2},
	}
	var evs []messages.Event
	for len(evs) < eventsPerRow+len(kinds) {
		evs = append(evs, kinds...)
	}
	rows, err := encodeRows(evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d events in %d rows, want 2", len(evs), len(rows))
	}
	var back []messages.Event
	for i, row := range rows {
		part := evs[i*eventsPerRow : min(len(evs), (i+1)*eventsPerRow)]
		tagged := make([]taggedEvent, len(part))
		for j, ev := range part {
			kind, _ := eventKind(ev)
			data, _ := json.Marshal(ev)
			tagged[j] = taggedEvent{Kind: kind, Event: data}
		}
		want, _ := json.Marshal(tagged)
		if !bytes.Equal(row.Data, want) {
			t.Fatalf("row %d differs from the tagged array:\n got %.200s\nwant %.200s", i, row.Data, want)
		}
		got, err := decodeRow(row)
		if err != nil {
			t.Fatalf("decode row %d: %v", i, err)
		}
		back = append(back, got...)
	}
	if !reflect.DeepEqual(back, evs) {
		t.Fatal("events read back differ from those written")
	}
}

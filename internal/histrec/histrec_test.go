package histrec

import (
	"encoding/json"
	"testing"
)

// TestSizeIsJoinsLength checks that Size and EntriesLen give the lengths
// Join and AppendEntries write, and that the joined record is the record.
func TestSizeIsJoinsLength(t *testing.T) {
	entries := []json.RawMessage{[]byte(`{"a":1}`), []byte(`"b"`), []byte(`[]`)}
	for _, tc := range []struct {
		head    string
		entries []json.RawMessage
		want    string
	}{
		{`{"state":1}`, entries, `{"state":1,"history":[{"a":1},"b",[]]}`},
		{`{"state":1}`, entries[:1], `{"state":1,"history":[{"a":1}]}`},
		{`{"state":1}`, nil, `{"state":1}`},
	} {
		joined := AppendEntries(nil, tc.entries)
		if len(joined) != EntriesLen(tc.entries) {
			t.Errorf("%d entries: EntriesLen %d, joined %q", len(tc.entries), EntriesLen(tc.entries), joined)
		}
		got := Join([]byte(tc.head), joined)
		if string(got) != tc.want {
			t.Errorf("Join(%s, %s) = %s, want %s", tc.head, joined, got, tc.want)
		}
		if n := Size(len(tc.head), tc.entries); n != len(got) {
			t.Errorf("Size(%d, %d entries) = %d, Join wrote %d bytes", len(tc.head), len(tc.entries), n, len(got))
		}
		if !json.Valid(got) {
			t.Errorf("Join wrote invalid JSON: %s", got)
		}
	}
}

// TestWholeAndChange: a write under the limit is its record joined; a
// write's change is its counts, unless they do not fit its history.
func TestWholeAndChange(t *testing.T) {
	h := []json.RawMessage{[]byte(`1`), []byte(`2`), []byte(`3`)}
	w := &Write{Head: []byte(`{"state":1}`), History: h}
	const want = `{"state":1,"history":[1,2,3]}`
	if data, ok := w.Whole(len(want) + 1); !ok || string(data) != want {
		t.Errorf("Whole(%d) = %s, %v; want %s", len(want)+1, data, ok, want)
	}
	if data, ok := w.Whole(len(want)); ok {
		t.Errorf("Whole(%d) = %s; want none (the record takes as much)", len(want), data)
	}
	for _, tc := range []struct {
		w        Write
		dropped  int
		appended int
		ok       bool
	}{
		{Write{History: h, Delta: true, Dropped: 1, Appended: 2}, 1, 2, true},
		{Write{History: h, Delta: true}, 0, 0, true},
		{Write{History: h, Dropped: 1, Appended: 1}, 0, 0, false},              // no Delta
		{Write{History: h, Delta: true, Dropped: 1, Appended: 4}, 0, 0, false}, // more appended than there are
		{Write{History: h, Delta: true, Dropped: -1}, 0, 0, false},
		{Write{History: h, Delta: true, Appended: -1}, 0, 0, false},
	} {
		dropped, appended, ok := tc.w.Change()
		if ok != tc.ok || dropped != tc.dropped || len(appended) != tc.appended {
			t.Errorf("%+v: Change() = %d, %d entries, %v; want %d, %d, %v", tc.w, dropped, len(appended), ok, tc.dropped, tc.appended, tc.ok)
		}
		if ok && len(appended) > 0 && &appended[len(appended)-1][0] != &h[len(h)-1][0] {
			t.Errorf("%+v: the appended entries are not the history's last", tc.w)
		}
	}
}

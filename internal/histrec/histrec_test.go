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

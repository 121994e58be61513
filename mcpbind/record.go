// This file defines the record a Gate keeps in its Store for each workflow:
// the engine's persisted state, the call counts of states with maxCalls,
// the bounded run history, the lease of a call in progress, and the leases
// of the jobs (promise children) running for it.

package mcpbind

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// record is the stored form of one workflow:
//
//	{"state": <the engine's persisted state>,
//	 "calls": {"<state id>": 3},           // states with maxCalls only; omitted when empty
//	 "history": [<Transition>, ...],        // oldest first; omitted when empty
//	 "lease": {"id", "tool", "until"},      // while a call that sends an event runs; omitted otherwise
//	 "jobs": [{"session", "id", "until"}],  // the claims on its running jobs (jobs.go); omitted when none
//	 "approval": {"id", "state", "asked", "expires", "ask"},  // while an approval state is active (approval.go)
//	 "workflow": "<Options.WorkflowVersion>"}  // of the gate that saved it; omitted when unset (version.go)
type record struct {
	snap    []byte            // the engine's persisted state (State.MarshalJSON)
	calls   map[string]int    // calls that ran while a limited state was active
	history []json.RawMessage // encoded Transitions, oldest first
	lease   *lease            // the call that holds the workflow, if any
	jobs    []jobLease        // by session; never modified once in a record
	// approval is the pending approval, while an approval state is
	// active; never modified once in a record.
	approval *approvalRecord
	// wversion is the Options.WorkflowVersion of the gate that saved it
	// ("" if none was set).
	wversion string
}

// lease is the hold a call whose tool sends an event has on its workflow
// from before its handler runs until its event is saved: while it is live,
// no other such call of the workflow runs (see reserve.go).
type lease struct {
	ID    string    `json:"id"`    // random; the holder's fencing token
	Tool  string    `json:"tool"`  // the tool being called, for diagnostics
	Until time.Time `json:"until"` // the lease ends then unless renewed
}

// live reports whether a lease holds the workflow at now.
func (l *lease) live(now time.Time) bool { return l != nil && now.Before(l.Until) }

// encode writes the record. Its history entries are kept encoded, so a
// transition costs one entry's encoding, not the whole history's.
func (r *record) encode() []byte {
	b := make([]byte, 0, r.size())
	b = append(b, `{"state":`...)
	b = append(b, r.snap...)
	if len(r.calls) > 0 {
		b = append(b, `,"calls":{`...)
		ids := make([]string, 0, len(r.calls))
		for id := range r.calls {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, id)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(r.calls[id]), 10)
		}
		b = append(b, '}')
	}
	if len(r.history) > 0 {
		b = append(b, `,"history":[`...)
		for i, h := range r.history {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, h...)
		}
		b = append(b, ']')
	}
	if l := r.lease; l != nil {
		b = append(b, `,"lease":{"id":`...)
		b = jsonx.AppendString(b, l.ID)
		b = append(b, `,"tool":`...)
		b = jsonx.AppendString(b, l.Tool)
		b = append(b, `,"until":"`...)
		b = l.Until.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `"}`...)
	}
	if len(r.jobs) > 0 {
		b = append(b, `,"jobs":[`...)
		for i, j := range r.jobs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"session":`...)
			b = jsonx.AppendString(b, j.Session)
			b = append(b, `,"id":`...)
			b = jsonx.AppendString(b, j.ID)
			b = append(b, `,"until":"`...)
			b = j.Until.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, `"}`...)
		}
		b = append(b, ']')
	}
	if r.approval != nil {
		b = append(b, `,"approval":`...)
		b = append(b, r.approval.json()...)
	}
	if r.wversion != "" {
		b = append(b, `,"workflow":`...)
		b = jsonx.AppendString(b, r.wversion)
	}
	return append(b, '}')
}

// json returns the encoding of a pending approval in a record.
func (a *approvalRecord) json() []byte {
	b, _ := json.Marshal(a) // strings and times: cannot fail
	return b
}

// size returns the length of the record's encoding, without encoding it.
func (r *record) size() int {
	n := len(`{"state":`) + len(r.snap) + len(`}`)
	if len(r.calls) > 0 {
		n += len(`,"calls":{}`) + len(r.calls) - 1 // and a comma between entries
		var buf [24]byte
		for id, c := range r.calls {
			n += jsonx.StringLen(id) + len(`:`) + len(strconv.AppendInt(buf[:0], int64(c), 10))
		}
	}
	if len(r.history) > 0 {
		n += len(`,"history":[]`) + r.historyBytes() - 1 // historyBytes counts a comma per entry
	}
	if l := r.lease; l != nil {
		var buf [64]byte
		n += len(`,"lease":{"id":,"tool":,"until":""}`) + jsonx.StringLen(l.ID) + jsonx.StringLen(l.Tool) +
			len(l.Until.UTC().AppendFormat(buf[:0], time.RFC3339Nano))
	}
	if len(r.jobs) > 0 {
		var buf [64]byte
		n += len(`,"jobs":[]`) + len(r.jobs) - 1
		for _, j := range r.jobs {
			n += len(`{"session":,"id":,"until":""}`) + jsonx.StringLen(j.Session) + jsonx.StringLen(j.ID) +
				len(j.Until.UTC().AppendFormat(buf[:0], time.RFC3339Nano))
		}
	}
	if r.approval != nil {
		n += len(`,"approval":`) + len(r.approval.json())
	}
	if r.wversion != "" {
		n += len(`,"workflow":`) + jsonx.StringLen(r.wversion)
	}
	return n
}

// decodeRecord reads a record written by encode.
func decodeRecord(data []byte) (record, error) {
	var raw struct {
		State    json.RawMessage   `json:"state"`
		Calls    map[string]int    `json:"calls"`
		History  []json.RawMessage `json:"history"`
		Lease    *lease            `json:"lease"`
		Jobs     []jobLease        `json:"jobs"`
		Approval *approvalRecord   `json:"approval"`
		Workflow string            `json:"workflow"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return record{}, fmt.Errorf("mcpbind: reading the workflow record: %w", err)
	}
	if len(raw.State) == 0 || bytes.Equal(raw.State, []byte("null")) {
		return record{}, fmt.Errorf(`mcpbind: reading the workflow record: no "state"`)
	}
	return record{snap: raw.State, calls: raw.Calls, history: raw.History, lease: raw.Lease, jobs: raw.Jobs, approval: raw.Approval, wversion: raw.Workflow}, nil
}

// appendHistory returns history with entry added at the end, keeping the
// newest entries, at most limit of them and at most maxBytes bytes in all.
// The result never shares its backing array with history, which other
// views may hold.
func appendHistory(history []json.RawMessage, entry json.RawMessage, limit, maxBytes int) []json.RawMessage {
	if limit <= 0 {
		return nil
	}
	keep := history
	if len(keep) >= limit {
		keep = keep[len(keep)-limit+1:]
	}
	size := len(entry) + 1
	for _, h := range keep {
		size += len(h) + 1
	}
	for len(keep) > 0 && size > maxBytes {
		size -= len(keep[0]) + 1
		keep = keep[1:]
	}
	out := make([]json.RawMessage, 0, len(keep)+1)
	out = append(out, keep...)
	return append(out, entry)
}

// decodeHistory reads the encoded entries of a record's history. Entries
// that cannot be read (written by a newer version, say) are skipped.
func decodeHistory(history []json.RawMessage, key string) []Transition {
	out := make([]Transition, 0, len(history))
	for _, h := range history {
		var t Transition
		if json.Unmarshal(h, &t) == nil {
			t.Key = key
			out = append(out, t)
		}
	}
	return out
}

// carryCalls returns the call counts that survive a transition into a
// state whose active nodes are active: a count lives while its state stays
// active.
func carryCalls(calls map[string]int, active func(id string) bool) map[string]int {
	var out map[string]int
	for id, n := range calls {
		if active(id) {
			if out == nil {
				out = make(map[string]int, len(calls))
			}
			out[id] = n
		}
	}
	return out
}

// maxEntryBytes bounds the size of one history entry: its tool and event
// names, and five values of at most maxHistoryValue bytes each (with
// quoting, and a margin).
const maxEntryBytes = 8 << 10

// historyBytes returns the size of a record's history.
func (r *record) historyBytes() int {
	n := 0
	for _, h := range r.history {
		n += len(h) + 1
	}
	return n
}

// maxHistoryValue bounds the JSON of one value of a history entry's event
// (the call's arguments, its result): a larger or deeper value is kept as
// a digest, {"$digest": {"sha256": "<hex>", "bytes": n}}, so that an entry
// is always small and can always be written.
const maxHistoryValue = 1024

// appendTransition appends the JSON of a run-history entry, as
// json.Marshal(tr) would write it (with large values as digests) but
// without its reflection: history is written on every transition.
func appendTransition(b []byte, tr Transition) []byte {
	b = append(b, `{"tool":`...)
	b = jsonx.AppendString(b, tr.Tool)
	if tr.By != "" {
		b = append(b, `,"by":`...)
		b = jsonx.AppendString(b, tr.By)
	}
	if a := tr.Approval; a != nil {
		b = append(b, `,"approval":{"id":`...)
		b = jsonx.AppendString(b, a.ID)
		b = append(b, `,"approved":`...)
		b = strconv.AppendBool(b, a.Approved)
		b = append(b, `,"by":`...)
		b = jsonx.AppendString(b, a.By)
		b = append(b, `,"channel":`...)
		b = jsonx.AppendString(b, a.Channel)
		b = append(b, `,"authenticated":`...)
		b = strconv.AppendBool(b, a.Authenticated)
		b = append(b, '}')
	}
	if tr.Outcome != "" {
		b = append(b, `,"outcome":`...)
		b = jsonx.AppendString(b, tr.Outcome)
	}
	if tr.Event.Type != "" { // a call's entry (Outcome) has no event
		b = append(b, `,"event":{"type":`...)
		b = jsonx.AppendString(b, tr.Event.Type)
		var short [8]string // most events have a few keys: no allocation
		keys := short[:0]
		for k := range tr.Event.Data {
			if k != "type" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = append(b, ',')
			b = jsonx.AppendString(b, k)
			b = append(b, ':')
			b = appendHistoryValue(b, tr.Event.Data[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"from":`...)
	b = appendHistoryValue(b, tr.From)
	b = append(b, `,"to":`...)
	b = appendHistoryValue(b, tr.To)
	b = append(b, `,"time":"`...)
	b = tr.Time.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// appendHistoryValue appends a value of a history entry: its JSON if that
// is at most maxHistoryValue bytes, else its digest.
func appendHistoryValue(b []byte, v any) []byte {
	start := len(b)
	out, err := appendJSONValue(b, v, 0, start+maxHistoryValue)
	if err == nil && len(out)-start <= maxHistoryValue {
		return out
	}
	b = out[:start]
	full, err := json.Marshal(v)
	if err != nil {
		return append(b, `{"$digest":{"error":"not JSON"}}`...)
	}
	sum := sha256.Sum256(full)
	b = append(b, `{"$digest":{"sha256":"`...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, `","bytes":`...)
	b = strconv.AppendInt(b, int64(len(full)), 10)
	return append(b, `}}`...)
}

// errValueTooLarge stops appendJSONValue at its limit.
var errValueTooLarge = errors.New("value too large")

// appendJSONValue appends a JSON-shaped value (what encoding/json decodes
// into); anything else is marshaled with encoding/json. It fails, with b
// as far as it got, when the value nests deeper than maxDataDepth or b
// grows past limit bytes.
func appendJSONValue(b []byte, v any, depth, limit int) ([]byte, error) {
	if depth > maxDataDepth {
		return b, fmt.Errorf("value nested deeper than %d levels", maxDataDepth)
	}
	if len(b) > limit {
		return b, errValueTooLarge
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonx.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return b, fmt.Errorf("unsupported number %v", x)
		}
		return jsonx.AppendFloat(b, x), nil
	case map[string]any:
		var short [8]string // most objects have a few keys: no allocation
		keys := short[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, k)
			b = append(b, ':')
			if b, err = appendJSONValue(b, x[k], depth+1, limit); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONValue(b, e, depth+1, limit); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}

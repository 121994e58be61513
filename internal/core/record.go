// This file defines the record a gate (mcpbind.Gate) keeps in its Store for each workflow:
// the engine's persisted state, the call counts of states with maxCalls,
// the bounded run history, the lease of a call in progress, and the leases
// of the jobs (promise children) running for it.

package core

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/jsonx"
)

// MaxDataDepth bounds the nesting of a call's arguments: deeper ones are
// refused before the tool runs (they could not be recorded after it).
const MaxDataDepth = 64

// Record is the stored form of one workflow:
//
//	{"state": <the engine's persisted state>,
//	 "calls": {"<state id>": 3},           // states with maxCalls only; omitted when empty
//	 "history": [<Transition>, ...],        // oldest first; omitted when empty
//	 "lease": {"id", "tool", "until"},      // while a call that sends an event runs; omitted otherwise
//	 "jobs": [{"session", "id", "until"}],  // the claims on its running jobs (mcpbind/jobs.go); omitted when none
//	 "approval": {"id", "state", "asked", "expires", "ask"},  // while an approval state is active (mcpbind/approval.go)
//	 "workflow": "<Options.WorkflowVersion>"}  // of the gate that saved it; omitted when unset (mcpbind/version.go)
type Record struct {
	Snap    []byte            // the engine's persisted state (State.MarshalJSON)
	Calls   map[string]int    // calls that ran while a limited state was active
	History []json.RawMessage // encoded Transitions, oldest first
	Lease   *Lease            // the call that holds the workflow, if any
	Jobs    []JobLease        // by session; never modified once in a record
	// Approval is the pending approval, while an approval state is
	// active; never modified once in a record.
	Approval *ApprovalRecord
	// WorkflowVersion is the Options.WorkflowVersion of the gate that saved it
	// ("" if none was set).
	WorkflowVersion string
	// hist is the backing array of History, shared with the records that
	// hold another window of it, through which an entry is appended in
	// place (appendHistory); nil for a History nothing appends to in place.
	hist *historyArray
}

// Lease is the hold a call whose tool sends an event has on its workflow
// from before its handler runs until its event is saved: while it is live,
// no other such call of the workflow runs (see mcpbind/reserve.go).
type Lease struct {
	ID    string    `json:"id"`    // random; the holder's fencing token
	Tool  string    `json:"tool"`  // the tool being called, for diagnostics
	Until time.Time `json:"until"` // the lease ends then unless renewed
}

// Live reports whether a lease holds the workflow at now.
func (l *Lease) Live(now time.Time) bool { return l != nil && now.Before(l.Until) }

// JobLease is an instance's claim on one job of a workflow: the child
// named by Session (its session in the workflow's actor system) runs in
// the gate that wrote ID, until Until unless renewed.
type JobLease struct {
	Session string    `json:"session"`
	ID      string    `json:"id"`
	Until   time.Time `json:"until"`
}

// ApprovalRecord is the pending approval as the workflow's record keeps
// it, under "approval".
type ApprovalRecord struct {
	ID      string    `json:"id"`
	State   string    `json:"state"` // the id of the approval state it was made for
	Asked   time.Time `json:"asked"`
	Expires time.Time `json:"expires"`
	// Ask is the SHA-256 (hex) of the request state of the input request
	// that asks the client's user (input-required), once asked.
	Ask string `json:"ask,omitempty"`
}

// Encode writes the record. Its history entries are kept encoded, so a
// transition costs one entry's encoding, not the whole history's.
func (r *Record) Encode() []byte {
	return r.encode(make([]byte, 0, r.Size()), true)
}

// encodeHead writes the record without its history (histrec.Write.Head).
func (r *Record) encodeHead() []byte {
	return r.encode(make([]byte, 0, r.headSize()), false)
}

// encode appends the record's encoding to b, with its history or without.
func (r *Record) encode(b []byte, history bool) []byte {
	b = append(b, `{"state":`...)
	b = append(b, r.Snap...)
	if len(r.Calls) > 0 {
		b = append(b, `,"calls":{`...)
		ids := make([]string, 0, len(r.Calls))
		for id := range r.Calls {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, id)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(r.Calls[id]), 10)
		}
		b = append(b, '}')
	}
	if history && len(r.History) > 0 {
		b = append(b, `,"history":[`...)
		b = histrec.AppendEntries(b, r.History)
		b = append(b, ']')
	}
	if l := r.Lease; l != nil {
		b = append(b, `,"lease":{"id":`...)
		b = jsonx.AppendString(b, l.ID)
		b = append(b, `,"tool":`...)
		b = jsonx.AppendString(b, l.Tool)
		b = append(b, `,"until":"`...)
		b = l.Until.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `"}`...)
	}
	if len(r.Jobs) > 0 {
		b = append(b, `,"jobs":[`...)
		for i, j := range r.Jobs {
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
	if r.Approval != nil {
		b = append(b, `,"approval":`...)
		b = append(b, r.Approval.JSON()...)
	}
	if r.WorkflowVersion != "" {
		b = append(b, `,"workflow":`...)
		b = jsonx.AppendString(b, r.WorkflowVersion)
	}
	return append(b, '}')
}

// NewApprovalID returns a random approval id: 40 hex digits.
func NewApprovalID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// AskDigest is what an approval keeps of the request state it was asked
// with.
func AskDigest(nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return hex.EncodeToString(sum[:])
}

// JSON returns the encoding of a pending approval in a record.
func (a *ApprovalRecord) JSON() []byte {
	b, _ := json.Marshal(a) // strings and times: cannot fail
	return b
}

// timeLen returns the length of t in UTC in RFC 3339 with nanoseconds, as
// a record encodes its times, without formatting it (for years 0 to 9999:
// the date and time, a fraction without its trailing zeros, and "Z").
func timeLen(t time.Time) int {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		var buf [64]byte
		return len(t.AppendFormat(buf[:0], time.RFC3339Nano))
	}
	n := len("2006-01-02T15:04:05Z")
	if ns := t.Nanosecond(); ns != 0 {
		n += len(".999999999")
		for ; ns%10 == 0; ns /= 10 {
			n--
		}
	}
	return n
}

// Size returns the length of the record's encoding, without encoding it.
func (r *Record) Size() int { return histrec.Size(r.headSize(), r.History) }

// headSize returns the length of the record's encoding without its
// history.
func (r *Record) headSize() int {
	n := len(`{"state":`) + len(r.Snap) + len(`}`)
	if len(r.Calls) > 0 {
		n += len(`,"calls":{}`) + len(r.Calls) - 1 // and a comma between entries
		var buf [24]byte
		for id, c := range r.Calls {
			n += jsonx.StringLen(id) + len(`:`) + len(strconv.AppendInt(buf[:0], int64(c), 10))
		}
	}
	if l := r.Lease; l != nil {
		n += len(`,"lease":{"id":,"tool":,"until":""}`) + jsonx.StringLen(l.ID) + jsonx.StringLen(l.Tool) + timeLen(l.Until)
	}
	if len(r.Jobs) > 0 {
		n += len(`,"jobs":[]`) + len(r.Jobs) - 1
		for _, j := range r.Jobs {
			n += len(`{"session":,"id":,"until":""}`) + jsonx.StringLen(j.Session) + jsonx.StringLen(j.ID) + timeLen(j.Until)
		}
	}
	if r.Approval != nil {
		n += len(`,"approval":`) + len(r.Approval.JSON())
	}
	if r.WorkflowVersion != "" {
		n += len(`,"workflow":`) + jsonx.StringLen(r.WorkflowVersion)
	}
	return n
}

// DecodeRecord reads a record written by encode.
func DecodeRecord(data []byte) (Record, error) {
	var raw struct {
		State    json.RawMessage   `json:"state"`
		Calls    map[string]int    `json:"calls"`
		History  []json.RawMessage `json:"history"`
		Lease    *Lease            `json:"lease"`
		Jobs     []JobLease        `json:"jobs"`
		Approval *ApprovalRecord   `json:"approval"`
		Workflow string            `json:"workflow"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Record{}, fmt.Errorf("mcpbind: reading the workflow record: %w", err)
	}
	if len(raw.State) == 0 || bytes.Equal(raw.State, []byte("null")) {
		return Record{}, fmt.Errorf(`mcpbind: reading the workflow record: no "state"`)
	}
	return Record{Snap: raw.State, Calls: raw.Calls, History: raw.History, Lease: raw.Lease, Jobs: raw.Jobs, Approval: raw.Approval, WorkflowVersion: raw.Workflow}, nil
}

// AppendHistory returns history with entry added at the end, keeping the
// newest entries, at most limit of them and at most maxBytes bytes in all.
// The result never shares its backing array with history, which other
// views may hold.
func AppendHistory(history []json.RawMessage, entry json.RawMessage, limit, maxBytes int) []json.RawMessage {
	if limit <= 0 {
		return nil
	}
	keep := historyKept(history, entry, limit, maxBytes)
	out := make([]json.RawMessage, 0, len(keep)+1)
	out = append(out, keep...)
	return append(out, entry)
}

// historyKept returns the newest entries of history that are kept when
// entry is added: at most limit entries and maxBytes bytes in all, entry
// included.
func historyKept(history []json.RawMessage, entry json.RawMessage, limit, maxBytes int) []json.RawMessage {
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
	return keep
}

// historyArray is the backing array of the histories of records that
// hold windows of it: the free slot past the last entry any of them
// appended, which the next append in place claims.
type historyArray struct {
	free atomic.Pointer[json.RawMessage] // nil: the array is full
}

// appendHistory is AppendHistory for a history whose backing array is
// arr: the entry is written in place into the array's free slot when it
// is the one right after history (no other record's history was
// appended there first), and the window slides; else the history is
// copied into a new array with room to grow. Records that share the
// array never see each other's entries, since each holds its own
// window. An array holds at most twice limit entries, so that a history
// keeps up to twice its bytes alive until it is copied again.
func appendHistory(history []json.RawMessage, arr *historyArray, entry json.RawMessage, limit, maxBytes int) ([]json.RawMessage, *historyArray) {
	if limit <= 0 {
		return nil, nil
	}
	keep := historyKept(history, entry, limit, maxBytes)
	n := len(keep)
	if arr != nil && n < cap(keep) {
		out := keep[:n+1]
		if arr.free.CompareAndSwap(&out[n], nextSlot(out)) {
			out[n] = entry
			return out, arr
		}
	}
	out := make([]json.RawMessage, n+1, n+1+min(max(n, 4), limit))
	copy(out, keep)
	out[n] = entry
	arr = &historyArray{}
	arr.free.Store(nextSlot(out))
	return out, arr
}

// nextSlot returns the slot of h's backing array past its end, nil if
// there is none.
func nextSlot(h []json.RawMessage) *json.RawMessage {
	if len(h) == cap(h) {
		return nil
	}
	return &h[:len(h)+1][len(h)]
}

// DecodeHistory reads the encoded entries of a record's history. Entries
// that cannot be read (written by a newer version, say) are skipped.
func DecodeHistory(history []json.RawMessage, key string) []gate.Transition {
	out := make([]gate.Transition, 0, len(history))
	for _, h := range history {
		var t gate.Transition
		if json.Unmarshal(h, &t) == nil {
			t.Key = key
			out = append(out, t)
		}
	}
	return out
}

// CarryCalls returns the call counts that survive a transition into a
// state whose active nodes are active: a count lives while its state stays
// active.
func CarryCalls(calls map[string]int, active func(id string) bool) map[string]int {
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

// MaxEntryBytes bounds the size of one history entry: its tool and event
// names, and five values of at most maxHistoryValue bytes each (with
// quoting, and a margin).
const MaxEntryBytes = 8 << 10

// maxHistoryValue bounds the JSON of one value of a history entry's event
// (the call's arguments, its result): a larger or deeper value is kept as
// a digest, {"$digest": {"sha256": "<hex>", "bytes": n}}, so that an entry
// is always small and can always be written.
const maxHistoryValue = 1024

// AppendTransition appends the JSON of a run-history entry, as
// json.Marshal(tr) would write it (with large values as digests) but
// without its reflection: history is written on every transition.
func AppendTransition(b []byte, tr gate.Transition) []byte {
	return appendTransition(b, tr, nil)
}

// callData is the data of the event of a call whose event carries none
// (callEvent): what it would carry, as the call has it.
type callData struct {
	tool   string
	args   json.RawMessage // the call's arguments, as its front door gave them
	output any             // the tool's structured result, normalized; nil if none
}

// appendTransition is AppendTransition; with d, the event's data is d's,
// written as AppendTransition writes the data callEvent would give the
// event ({"tool", "input": decodeJSON(args), "output"}), without building it.
func appendTransition(b []byte, tr gate.Transition, d *callData) []byte {
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
		if d != nil {
			b = d.appendMembers(b)
		}
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
			b = AppendHistoryValue(b, tr.Event.Data[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"from":`...)
	b = AppendHistoryValue(b, tr.From)
	b = append(b, `,"to":`...)
	b = AppendHistoryValue(b, tr.To)
	b = append(b, `,"time":"`...)
	b = tr.Time.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// appendMembers appends the members of a call's event data, in the order
// of their keys.
func (d *callData) appendMembers(b []byte) []byte {
	b = append(b, `,"input":`...)
	b = appendRawHistoryValue(b, d.args)
	if d.output != nil {
		b = append(b, `,"output":`...)
		b = AppendHistoryValue(b, d.output)
	}
	b = append(b, `,"tool":`...)
	if jsonx.StringLen(d.tool) > maxHistoryValue {
		return AppendHistoryValue(b, d.tool)
	}
	return jsonx.AppendString(b, d.tool)
}

// AppendHistoryValue appends a value of a history entry: its JSON if that
// is at most maxHistoryValue bytes, else its digest.
func AppendHistoryValue(b []byte, v any) []byte {
	start := len(b)
	out, err := AppendJSONValue(b, v, 0, start+maxHistoryValue)
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

// AppendJSONValue appends a JSON-shaped value (what encoding/json decodes
// into); anything else is marshaled with encoding/json. It fails, with b
// as far as it got, when the value nests deeper than MaxDataDepth or b
// grows past limit bytes.
func AppendJSONValue(b []byte, v any, depth, limit int) ([]byte, error) {
	if depth > MaxDataDepth || len(b) > limit {
		return appendJSONOther(b, v, depth, limit)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonx.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return jsonx.AppendFloat(b, x), nil
		}
	case map[string]any:
		return appendJSONObject(b, x, depth, limit)
	}
	return appendJSONOther(b, v, depth, limit)
}

// appendJSONOther is AppendJSONValue of what it leaves: arrays, values it
// refuses, and values that are not JSON-shaped. The functions that write
// objects and the rest are apart from AppendJSONValue, which writes most
// values, so that its frame stays small: history entries are written
// deep in a call's stack.
func appendJSONOther(b []byte, v any, depth, limit int) ([]byte, error) {
	if depth > MaxDataDepth {
		return b, fmt.Errorf("value nested deeper than %d levels", MaxDataDepth)
	}
	if len(b) > limit {
		return b, errValueTooLarge
	}
	switch x := v.(type) {
	case float64:
		return b, fmt.Errorf("unsupported number %v", x)
	case []any:
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = AppendJSONValue(b, e, depth+1, limit); err != nil {
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

// appendJSONObject is AppendJSONValue of an object, its keys sorted.
func appendJSONObject(b []byte, x map[string]any, depth, limit int) ([]byte, error) {
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
		if b, err = AppendJSONValue(b, x[k], depth+1, limit); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

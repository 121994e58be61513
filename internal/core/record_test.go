package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/statechart"
)

// randomValue returns a random JSON-shaped value.
func randomValue(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "cart_pay", `quo"te`, `back\slash`, "tab\there", "new\nline", "ctl\x01", "é ü 😀", "<b>&amp;</b>", "\xff\xfe bad utf-8", "\u2028"}
	switch k := r.IntN(7); {
	case k == 0 || depth > 3:
		return strs[r.IntN(len(strs))]
	case k == 1:
		return []float64{0, -1, 0.1, 1e300, -2.5e-300, 123456789012345, math.Copysign(0, -1)}[r.IntN(7)]
	case k == 2:
		return r.IntN(2) == 0
	case k == 3:
		return nil
	case k == 4:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[strs[r.IntN(len(strs))]] = randomValue(r, depth+1)
		}
		return m
	}
}

// digested is what a history entry keeps of a value: the value, or its
// digest when its JSON is longer than maxHistoryValue.
func digested(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) <= maxHistoryValue {
		return v
	}
	sum := sha256.Sum256(b)
	return map[string]any{"$digest": map[string]any{"sha256": hex.EncodeToString(sum[:]), "bytes": len(b)}}
}

// TestAppendTransition: the hand-written encoding of a history entry
// decodes to what encoding/json's does, with values over maxHistoryValue
// bytes replaced by their digest.
func TestAppendTransition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	zone := time.FixedZone("X", -5*3600-1800)
	for i := range 2000 {
		tr := gate.Transition{
			Tool:  []string{"cart_pay", `we"ird`, "workflow_transition"}[i%3],
			Event: statechart.Event{Type: []string{"PAY", "xstate.done.state.m", "é"}[i%3], Data: map[string]any{"tool": "t", "input": randomValue(r, 0), "output": randomValue(r, 0)}},
			From:  randomValue(r, 1),
			To:    randomValue(r, 1),
			Time:  time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In([]*time.Location{time.UTC, zone}[i%2]),
		}
		if i%4 == 0 {
			tr.Approval = &gate.ApprovalGrant{ID: NewApprovalID(), Approved: i%8 == 0, By: []string{"ada", `we"ird`, "é"}[i%3], Channel: gate.ChannelCommand, Authenticated: i%3 == 0}
		}
		got := AppendTransition(nil, tr)
		kept := tr
		kept.Event.Data = map[string]any{}
		for k, v := range tr.Event.Data {
			kept.Event.Data[k] = digested(t, v)
		}
		kept.From, kept.To = digested(t, tr.From), digested(t, tr.To)
		want, err := json.Marshal(kept)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("invalid JSON %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("appendTransition:\n%s\njson.Marshal:\n%s", got, want)
		}
		var back gate.Transition
		if err := json.Unmarshal(got, &back); err != nil || !back.Time.Equal(tr.Time) || back.Tool != tr.Tool || back.Event.Type != tr.Event.Type ||
			!reflect.DeepEqual(back.Approval, tr.Approval) {
			t.Fatalf("read back %+v, %v", back, err)
		}
	}
	// Numbers are written as encoding/json writes them, so that a
	// history reads as the calls were made.
	nums := AppendTransition(nil, gate.Transition{Event: statechart.Event{Type: "PAY", Data: map[string]any{"input": map[string]any{"amount": 1e6, "rate": 1e-7, "huge": 1e21}}}})
	for _, want := range []string{`"amount":1000000`, `"rate":1e-7`, `"huge":1e+21`} {
		if !strings.Contains(string(nums), want) {
			t.Errorf("entry %s lacks %s", nums, want)
		}
	}
	if got := AppendTransition(nil, gate.Transition{From: math.NaN()}); !json.Valid(got) || !strings.Contains(string(got), `"from":{"$digest":{"error":"not JSON"}}`) {
		t.Fatalf("NaN: %s", got)
	}
}

// TestAppendTransitionBounded: an entry is valid JSON of bounded size
// whatever the call's data: large values and values nested deeper than
// any decoder accepts are kept as digests.
func TestAppendTransitionBounded(t *testing.T) {
	deep := any("x")
	for range 200 {
		deep = map[string]any{"a": deep}
	}
	big := strings.Repeat("x", 1<<20)
	tr := gate.Transition{Tool: "t", Event: statechart.Event{Type: "E", Data: map[string]any{"input": deep, "output": big}}, From: "a", To: "b", Time: time.Unix(0, 0)}
	got := AppendTransition(nil, tr)
	if len(got) > 600 {
		t.Fatalf("entry of %d bytes: %.300s", len(got), got)
	}
	var back gate.Transition
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	for _, k := range []string{"input", "output"} {
		d, ok := back.Event.Data[k].(map[string]any)["$digest"].(map[string]any)
		if !ok || len(d["sha256"].(string)) != 64 || d["bytes"].(float64) < 400 {
			t.Fatalf("%s kept as %v", k, back.Event.Data[k])
		}
	}
}

// TestRecordSize: a record's size, computed without encoding it, is the
// length of its encoding, which decodes back to the record.
func TestRecordSize(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "pay.card", `we"ird`, "é", "ctl\x01", "<&>", ""}
	for i := range 500 {
		rec := Record{Snap: []byte(`{"value":"a","n":` + strconv.Itoa(i) + `}`)}
		for range r.IntN(4) {
			if rec.Calls == nil {
				rec.Calls = map[string]int{}
			}
			rec.Calls[names[r.IntN(len(names))]] = r.IntN(1 << r.IntN(40))
		}
		for range r.IntN(5) {
			rec.History = append(rec.History, AppendTransition(nil, gate.Transition{Tool: names[r.IntN(len(names))], Event: statechart.Event{Type: "E"}, From: randomValue(r, 1), To: "b", Time: time.Unix(r.Int64N(4e9), r.Int64N(1e9))}))
		}
		if r.IntN(2) == 0 {
			rec.Lease = &Lease{ID: "0123456789abcdef." + strconv.Itoa(i), Tool: names[r.IntN(len(names))], Until: time.Unix(r.Int64N(4e9), []int64{0, 1e8, r.Int64N(1e9)}[r.IntN(3)]).In(time.FixedZone("X", 3600))}
		}
		for j := range r.IntN(3) {
			rec.Jobs = append(rec.Jobs, JobLease{Session: names[r.IntN(len(names))] + strconv.Itoa(j), ID: "0123456789abcdef." + strconv.Itoa(i), Until: time.Unix(r.Int64N(4e9), r.Int64N(1e9))})
		}
		if r.IntN(2) == 0 {
			rec.Approval = &ApprovalRecord{ID: NewApprovalID(), State: names[r.IntN(len(names))], Asked: time.Unix(r.Int64N(4e9), r.Int64N(1e9)),
				Expires: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("X", 3600))}
			if r.IntN(2) == 0 {
				rec.Approval.Ask = AskDigest(names[r.IntN(len(names))])
			}
		}
		b := rec.Encode()
		if rec.Size() != len(b) {
			t.Fatalf("size %d, encoding of %d bytes: %s", rec.Size(), len(b), b)
		}
		// Written split and joined again, the record reads back alike.
		var entries []byte
		for j, h := range rec.History {
			if j > 0 {
				entries = append(entries, ',')
			}
			entries = append(entries, h...)
		}
		head := rec.encodeHead()
		if fromSplit, err := DecodeRecord(histrec.Join(head, entries)); err != nil || !reflect.DeepEqual(fromSplit.History, mustDecode(t, b).History) {
			t.Fatalf("split %s and joined: %+v, %v; want the history of %s", head, fromSplit, err, b)
		}
		back, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if !reflect.DeepEqual(back.Calls, rec.Calls) || len(back.History) != len(rec.History) || (back.Lease == nil) != (rec.Lease == nil) ||
			(rec.Lease != nil && (back.Lease.ID != rec.Lease.ID || back.Lease.Tool != rec.Lease.Tool || !back.Lease.Until.Equal(rec.Lease.Until))) {
			t.Fatalf("read back %+v from %s", back, b)
		}
		if len(back.Jobs) != len(rec.Jobs) {
			t.Fatalf("read back jobs %+v from %s", back.Jobs, b)
		}
		if a, ba := rec.Approval, back.Approval; (a == nil) != (ba == nil) ||
			(a != nil && (ba.ID != a.ID || ba.State != a.State || ba.Ask != a.Ask || !ba.Asked.Equal(a.Asked) || !ba.Expires.Equal(a.Expires))) {
			t.Fatalf("read back approval %+v, wrote %+v: %s", ba, a, b)
		}
		for j, jl := range rec.Jobs {
			if bj := back.Jobs[j]; bj.Session != jl.Session || bj.ID != jl.ID || !bj.Until.Equal(jl.Until) {
				t.Fatalf("read back job %+v, wrote %+v: %s", bj, jl, b)
			}
		}
	}
}

// mustDecode decodes a record's encoding.
func mustDecode(t *testing.T, b []byte) Record {
	t.Helper()
	r, err := DecodeRecord(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return r
}

// TestHistoryDelta: the histories a record goes through as entries are
// appended (in place or copied, dropped by count or by bytes) are told as
// a change of the one before, which applied to it gives the next; a
// history whose entries are equal but not the same (decoded again) is
// told as all of them dropped and the new ones appended; one in another
// order is no change of it.
func TestHistoryDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	apply := func(prev []json.RawMessage, next []json.RawMessage, dropped, appended int) []json.RawMessage {
		return append(slices.Clone(prev[dropped:]), next[len(next)-appended:]...)
	}
	var h []json.RawMessage
	var arr *historyArray
	for i := range 300 {
		entry := json.RawMessage(strings.Repeat("x", r.IntN(40)) + strconv.Itoa(i))
		var next []json.RawMessage
		if r.IntN(3) == 0 {
			next = AppendHistory(h, entry, 20, 400)
		} else {
			next, arr = appendHistory(h, arr, entry, 20, 400)
		}
		dropped, appended, ok := historyDelta(h, next)
		if !ok || appended != 1 {
			t.Fatalf("step %d: delta %d, %d, %v; want one appended", i, dropped, appended, ok)
		}
		if got := apply(h, next, dropped, appended); !reflect.DeepEqual(got, next) {
			t.Fatalf("step %d: the delta gives %s; want %s", i, got, next)
		}
		h = next
	}
	if _, _, ok := historyDelta(h, h); !ok {
		t.Fatal("an unchanged history is not a delta of itself")
	}
	if d, a, ok := historyDelta(h, nil); !ok || d != len(h) || a != 0 {
		t.Fatalf("an emptied history: %d, %d, %v; want every entry dropped", d, a, ok)
	}
	copied := make([]json.RawMessage, len(h))
	for i, e := range h {
		copied[i] = slices.Clone(e)
	}
	if d, a, ok := historyDelta(h, copied); !ok || d != len(h) || a != len(copied) {
		t.Fatalf("a history of equal copies: %d, %d, %v; want every entry dropped and the copies appended", d, a, ok)
	}
	swapped := slices.Clone(h)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	if _, _, ok := historyDelta(h, swapped); ok {
		t.Fatal("a reordered history is told as a change of the original")
	}
}

// TestAppendHistoryInPlace: an entry appended to the newest history goes
// into its backing array's free slot (no copy), while a second entry
// appended to the same history (another call's, that lost the
// compare-and-swap) gets its own array: neither history sees the other's
// entry, and the history both started from is unchanged.
func TestAppendHistoryInPlace(t *testing.T) {
	entry := func(i int) json.RawMessage { return json.RawMessage(strconv.Itoa(i)) }
	var h []json.RawMessage
	var arr *historyArray
	for i := range 30 {
		h, arr = appendHistory(h, arr, entry(i), 20, 1<<20)
	}
	if len(h) != 20 || string(h[0]) != "10" || string(h[19]) != "29" {
		t.Fatalf("history %s", h)
	}
	// Find a history whose array has room, as most have.
	for cap(h) == len(h) {
		h, arr = appendHistory(h, arr, entry(0), 20, 1<<20)
	}
	base := h
	a, _ := appendHistory(base, arr, json.RawMessage(`"A"`), 20, 1<<20)
	if &a[0] != &base[1] {
		t.Fatal("the first append to the newest history copied it")
	}
	b, _ := appendHistory(base, arr, json.RawMessage(`"B"`), 20, 1<<20)
	if string(a[19]) != `"A"` || string(b[19]) != `"B"` || len(base) != 20 || string(base[19]) != string(h[19]) {
		t.Fatalf("a ends with %s, b with %s, base with %s", a[19], b[19], base[19])
	}
	for i := range 19 {
		if string(a[i]) != string(base[i+1]) || string(b[i]) != string(base[i+1]) {
			t.Fatalf("entry %d: a %s, b %s, base %s", i, a[i], b[i], base[i+1])
		}
	}
}

// TestTimeLen: timeLen is the length of a time as a record encodes it,
// for fractions with and without trailing zeros, other zones, and years
// past four digits.
func TestTimeLen(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 5, time.UTC), time.Unix(0, 0), time.Unix(1, 1e8).In(time.FixedZone("X", -7*3600))}
	for range 1000 {
		ns := r.Int64N(1e9)
		for range r.IntN(10) {
			ns -= ns % 10 // one more trailing zero
			ns /= 10
		}
		for ns != 0 && ns < 1e8 {
			ns *= 10
		}
		times = append(times, time.Unix(r.Int64N(1e11)-1e10, ns).In(time.FixedZone("Y", r.IntN(50000)-25000)))
	}
	for _, tm := range times {
		if got, want := timeLen(tm), len(tm.UTC().Format(time.RFC3339Nano)); got != want {
			t.Fatalf("timeLen(%v) = %d, want %d", tm, got, want)
		}
	}
}

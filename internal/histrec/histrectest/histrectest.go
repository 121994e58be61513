// Package histrectest helps test the stores that keep a workflow record's
// history apart from its head (histrec.Store): history entries of a
// gate's size, the record a load returns, and a gate that writes split
// records through a store.
package histrectest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// Entries returns n history entries, numbered from first, of about the
// size of a gate's (136 bytes).
func Entries(first, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"tool":"echo","event":{"type":"E","input":{"text":"hello"}},"from":"a","to":"a","n":%d,"time":"2026-11-29T22:33:20.29357472Z"}`, first+i))
	}
	return out
}

// Joined is the record a load returns for head and history.
func Joined(head string, history []json.RawMessage) string {
	if len(history) == 0 {
		return head
	}
	parts := make([]string, len(history))
	for i, h := range history {
		parts[i] = string(h)
	}
	return strings.TrimSuffix(head, "}") + `,"history":[` + strings.Join(parts, ",") + "]}"
}

// GateHistory makes 7 calls through a gate on store that keeps 3 history
// entries, each of which moves its workflow, and checks that other (a
// second store on the same backend) loads the workflow with its count at
// 7 and the 3 newest entries, oldest first. It returns the workflow's
// key, for the store's own checks of how it keeps the history. A store
// whose threshold is set to 0 writes each record split.
func GateHistory(t *testing.T, store, other mcpbind.Store) string {
	t.Helper()
	ctx := context.Background()
	m, err := statechart.Compile([]byte(`{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {
		"on": {"E": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
		"meta": {"mcp": {"tools": ["*"], "events": {"step": "E"}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler), Store: store, HistoryLimit: 3, AuditCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "histrectest", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "step"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	g.Attach(srv)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "histrectest", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for range 7 {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "step"}); err != nil || res.IsError {
			t.Fatal(err, res)
		}
	}
	lister, ok := other.(mcpbind.Lister)
	if !ok {
		t.Fatalf("%T does not list its keys", other)
	}
	keys, err := lister.Keys(ctx, "")
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %q, %v; want one", keys, err)
	}
	data, _, err := other.Load(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		State struct {
			Context struct{ N int } `json:"context"`
		} `json:"state"`
		History []struct {
			Tool string    `json:"tool"`
			Time time.Time `json:"time"`
		} `json:"history"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if rec.State.Context.N != 7 || len(rec.History) != 3 {
		t.Fatalf("n = %d, %d history entries; want 7 and 3: %s", rec.State.Context.N, len(rec.History), data)
	}
	for i, h := range rec.History {
		if h.Tool != "step" || (i > 0 && h.Time.Before(rec.History[i-1].Time)) {
			t.Fatalf("history entry %d: %+v; want step calls, oldest first: %s", i, h, data)
		}
	}
	return keys[0]
}

// Store is a store that keeps histories apart.
type Store interface {
	mcpbind.Store
	histrec.Store
}

// Concurrent has workers write one record at once, each write a change
// of the history it loaded (the oldest entry dropped once there are
// keep, one appended) made by compare-and-swap against the version it
// loaded, and retried on a conflict; then it checks that the record
// counts every write once and that its history holds the newest keep
// entries, in order: no write lost, doubled or mixed with another.
// store's threshold must be 0, so that each write is split.
func Concurrent(t *testing.T, store Store, workers, writes int) {
	t.Helper()
	const keep = 5
	ctx := context.Background()
	head := func(n int) []byte { return fmt.Appendf(nil, `{"n":%d}`, n) }
	entry := func(n int) json.RawMessage { return fmt.Appendf(nil, `{"write":%d}`, n) }
	if _, err := store.CompareAndSwapSplit(ctx, "c", 0, &histrec.Write{Head: head(0)}, true); err != nil {
		t.Fatal(err)
	}
	type record struct {
		N       int               `json:"n"`
		History []json.RawMessage `json:"history"`
	}
	load := func() (record, uint64, error) {
		data, ver, err := store.Load(ctx, "c")
		var rec record
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err != nil {
			err = fmt.Errorf("loading %s: %w", data, err)
		}
		return rec, ver, err
	}
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for range writes {
				for {
					rec, ver, err := load()
					if err != nil {
						errs <- err
						return
					}
					dropped := max(0, len(rec.History)+1-keep)
					next := append(rec.History[dropped:len(rec.History):len(rec.History)], entry(rec.N+1))
					_, err = store.CompareAndSwapSplit(ctx, "c", ver, &histrec.Write{Head: head(rec.N + 1), History: next, Delta: true, Dropped: dropped, Appended: 1}, true)
					if err == nil {
						break
					}
					if !gate.IsConflict(err) {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rec, _, err := load()
	if err != nil {
		t.Fatal(err)
	}
	total := workers * writes
	if rec.N != total || len(rec.History) != keep {
		t.Fatalf("n = %d with %d history entries; want %d and %d", rec.N, len(rec.History), total, keep)
	}
	for i, h := range rec.History {
		if want := entry(total - keep + 1 + i); string(h) != string(want) {
			t.Fatalf("history entry %d is %s; want %s (history %s)", i, h, want, rec.History)
		}
	}
}

// WriteKinds are the writes [Writes] makes: "lease" changes the head
// alone, "commit" drops the oldest entry and appends one (a change, as a
// moving call's write), "whole" does the same with CompareAndSwap, the
// record written whole, joined into one buffer as the gate encodes it.
var WriteKinds = []string{"lease", "commit", "whole"}

// Writes creates a record with n history entries under "k" and rewrites
// it in b.Loop, the kind of write it names (see [WriteKinds]). ready, if
// not nil, is called once the record is created, before the loop.
func Writes(b *testing.B, s Store, kind string, n int, ready func()) {
	b.Helper()
	ctx := context.Background()
	head := []byte(`{"state":{"value":"a","context":{"n":1}}}`)
	hist := Entries(0, n)
	v, err := s.CompareAndSwapSplit(ctx, "k", 0, &histrec.Write{Head: head, History: hist}, true)
	if err != nil {
		b.Fatal(err)
	}
	if ready != nil {
		ready()
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if kind != "lease" {
			hist = append(hist[1:len(hist):len(hist)], Entries(n+i, 1)...)
		}
		switch kind {
		case "lease":
			v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true}, false)
		case "commit":
			v, err = s.CompareAndSwapSplit(ctx, "k", v, &histrec.Write{Head: head, History: hist, Delta: true, Dropped: 1, Appended: 1}, true)
		case "whole":
			buf := histrec.AppendEntries(append(head[:len(head)-1:len(head)-1], `,"history":[`...), hist)
			v, err = s.CompareAndSwap(ctx, "k", v, append(buf, "]}"...))
		default:
			b.Fatalf("no write %q", kind)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

package mcpbind

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

// checkCutHandle checks cutHandle against encoding/json: for arguments
// that decode into an object with a workflow_id member, it finds that
// member's value (the last of repeated ones) and returns the other members
// as an object that decodes to the same values; for any other arguments
// it finds no workflow_id.
func checkCutHandle(t *testing.T, args string) {
	t.Helper()
	id, rest, ok := cutHandle(json.RawMessage(args))
	var all map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &all) != nil || all == nil {
		if ok {
			t.Fatalf("cutHandle(%q) found %s in arguments that are not a JSON object", args, id.Raw)
		}
		return
	}
	want, has := all[handleArg]
	if ok != has {
		t.Fatalf("cutHandle(%q): found %v, encoding/json finds %v", args, ok, has)
	}
	if !ok {
		return
	}
	var got, wantID any
	if err := json.Unmarshal([]byte(id.Raw), &got); err != nil {
		t.Fatalf("cutHandle(%q): id %q: %v", args, id.Raw, err)
	}
	if err := json.Unmarshal(want, &wantID); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantID) {
		t.Fatalf("cutHandle(%q): id %s, encoding/json reads %s", args, id.Raw, want)
	}
	var left, wantLeft map[string]any
	if err := json.Unmarshal(rest, &left); err != nil {
		t.Fatalf("cutHandle(%q): the rest %q is not JSON: %v", args, rest, err)
	}
	if err := json.Unmarshal([]byte(args), &wantLeft); err != nil {
		t.Fatal(err)
	}
	delete(wantLeft, handleArg)
	if !reflect.DeepEqual(left, wantLeft) {
		t.Fatalf("cutHandle(%q): rest %s, want %v", args, rest, wantLeft)
	}
}

// TestCutHandle: the workflow_id member is taken out of a call's
// arguments, whatever their layout, and the other members are kept.
func TestCutHandle(t *testing.T) {
	for _, args := range []string{
		`{"workflow_id":"0123456789abcdef0123456789abcdef"}`,
		`{"x":1,"workflow_id":"abc","y":{"z":[1,2,{"workflow_id":"inner"}]}}`,
		` { "a" : "b" , "workflow_id" : 7 } `,
		`{"workflow_id":"first","b":true,"workflow_id":"last"}`,
		`{"workflow\u005fid":"escaped key","s":"\"quoted\""}`,
		`{"x":1}`, `{}`, `[]`, `"workflow_id"`, `null`, ``, `{"workflow_id":}`, `{"workflow_id":"a"`,
	} {
		checkCutHandle(t, args)
	}
	_, rest, _ := cutHandle(json.RawMessage(`{"b":2,"workflow_id":"x","a":{"k" : 1}}`))
	if string(rest) != `{"b":2,"a":{"k" : 1}}` {
		t.Fatalf("rest %s: members must keep their order and their values as written", rest)
	}
}

func FuzzCutHandle(f *testing.F) {
	for _, s := range []string{`{"workflow_id":"x","a":1}`, `{"a":[1,{"b":null}],"workflow_id":2}`, `{"workflow\u005fid":"e"}`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(checkCutHandle)
}

// TestTakeHandleCopiesID: the workflow id and store key a call's handle
// gives are the handle's even after the request's arguments, which are
// parsed in place, are overwritten (as a transport reusing its buffer
// would): nothing the call keeps points into them.
func TestTakeHandleCopiesID(t *testing.T) {
	g, req := movingCall(t, true, nil)
	want := gjson.GetBytes(req.Params.Arguments, handleArg).Str
	id, key, stripped, refusal := g.takeHandle(context.Background(), nil, req, nil)
	if refusal != nil {
		t.Fatalf("refused: %v", refusal)
	}
	for i := range req.Params.Arguments {
		req.Params.Arguments[i] = '0'
	}
	if id != want || key != g.core.HandleKey(want) {
		t.Fatalf("after the arguments changed: id %q, key %q; want %q, %q", id, key, want, g.core.HandleKey(want))
	}
	if a := string(stripped.Params.Arguments); a != `{"x":1}` {
		t.Fatalf("the handler's arguments became %s", a)
	}
}

package stdio

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzPlainRequest checks that every line plainRequest lets past without
// decoding is one jsonrpc.DecodeMessage accepts as a request.
func FuzzPlainRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"\u006asonrpc":"2.0","id":1,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !validObject(line) || !plainRequest(line) {
			return
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("plainRequest passed %s, which DecodeMessage refuses: %v", line, err)
		}
		if _, ok := msg.(*jsonrpc.Request); !ok {
			t.Fatalf("plainRequest passed %s, which is not a request", line)
		}
	})
}

func TestPlainRequest(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`: true,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:               true,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`:                         false,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`:                      false,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`:                       false,
		`{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`:                   false,
		`{"\u006asonrpc":"2.0","id":1,"method":"ping"}`:                        false,
	} {
		if got := plainRequest([]byte(line)); got != want {
			t.Errorf("plainRequest(%s) = %v, want %v", line, got, want)
		}
	}
}

// validObject reports whether line is what check hands plainRequest: a
// single valid JSON object.
func validObject(line []byte) bool {
	return json.Valid(line) && len(line) > 0 && line[0] == '{'
}

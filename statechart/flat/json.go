// This file holds the low-level JSON reading shared by Compile and Restore:
// hard limits checked before gjson parses anything, readable JSON paths and
// did-you-mean hints. The helpers shared with package statechart (key order,
// Go values, kinds, state paths, edit distance) live in internal/jsonx.

package flat

import (
	"fmt"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// Hard limits on the input of Compile and Restore.
const (
	// MaxBytes is the largest document Compile and Restore accept.
	MaxBytes = 8 << 20
	// MaxDepth is the deepest JSON nesting Compile and Restore accept.
	MaxDepth = 256
	// MaxStates is the largest number of states a flat machine may have.
	MaxStates = 100_000
)

// checkDocument rejects a document that is too large, nested too deeply or
// not valid JSON. The depth is measured by an iterative scan before gjson
// (whose validator recurses) sees the data.
func checkDocument(data []byte) *statechart.Error {
	if len(data) > MaxBytes {
		return &statechart.Error{Msg: fmt.Sprintf("document is %d bytes, more than the limit of %d", len(data), MaxBytes)}
	}
	if jsonx.TooDeep(data, MaxDepth) {
		return &statechart.Error{Msg: fmt.Sprintf("JSON nesting is deeper than the limit of %d", MaxDepth)}
	}
	if !gjson.ValidBytes(data) {
		return &statechart.Error{Msg: "malformed JSON: " + jsonx.SyntaxError(data)}
	}
	if !utf8.Valid(data) {
		// gjson passes invalid UTF-8 through, but encoding/json replaces it,
		// so ids containing it would not survive MarshalJSON and Restore.
		bad := 0
		for s := data; len(s) > 0; {
			r, size := utf8.DecodeRune(s)
			if r == utf8.RuneError && size <= 1 {
				break
			}
			bad += size
			s = s[size:]
		}
		line, col := jsonx.Position(data, bad)
		return &statechart.Error{Msg: fmt.Sprintf("malformed JSON: line %d, column %d: invalid UTF-8", line, col)}
	}
	return nil
}

// isEmpty reports whether v is absent, null, {} or [].
func isEmpty(v gjson.Result) bool {
	switch {
	case !v.Exists(), v.Type == gjson.Null:
		return true
	case v.IsObject(), v.IsArray():
		empty := true
		v.ForEach(func(_, _ gjson.Result) bool {
			empty = false
			return false
		})
		return empty
	}
	return false
}

// didYouMean returns ` (did you mean "x"?)` for the candidate of a short,
// fixed list (the keys a member may have) closest to s, or "" when none is
// close enough. Hints among a machine's states are spent from the
// loader's hint.Budget.
func didYouMean(s string, candidates []string) string {
	return hint.DidYouMean(s, candidates)
}

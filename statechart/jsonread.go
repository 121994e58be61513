// This file defines the loader's own JSON reading: hard limits checked
// before parsing and readable JSON paths. The helpers it shares with package
// statechart/flat (key order, Go values, kinds, state paths, edit distance)
// live in internal/jsonx.

package statechart

import (
	"fmt"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// checkDocument rejects input that is too large, nested too deeply, or not
// valid JSON, before gjson parses it. The depth scan is iterative, so hostile
// nesting cannot exhaust the stack.
func checkDocument(data []byte, maxBytes, maxDepth int) *Error {
	if len(data) > maxBytes {
		return &Error{Msg: fmt.Sprintf("document is %d bytes, more than the limit of %d", len(data), maxBytes), err: ErrLimit}
	}
	if jsonx.TooDeep(data, maxDepth) {
		return &Error{Msg: fmt.Sprintf("JSON nesting is deeper than the limit of %d", maxDepth), err: ErrLimit}
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "the document is not valid UTF-8"}
	}
	if !gjson.ValidBytes(data) {
		return &Error{Msg: "malformed JSON: " + jsonx.SyntaxError(data)}
	}
	return nil
}

// jsonPath builds readable paths: key appends ".key" (or `["key"]` when the
// key would be ambiguous), index appends "[i]".
type jsonPath string

// A key holding NUL, which starts a node reference (see nodeRef), is
// always quoted.
func (p jsonPath) key(k string) jsonPath { return jsonPath(jsonx.Path(p).Key(k)) }

func (p jsonPath) index(i int) jsonPath { return jsonPath(jsonx.Path(p).Index(i)) }

// lazyPath is a JSON path spelled out only when a message needs it: a
// spelled path and up to two keys below it. Reading the transitions of
// thousands of states then builds none of their paths ("…on.NEXT"), since
// a valid transition has no message.
type lazyPath struct {
	base jsonPath
	keys [2]string
	n    int
}

// lazy returns p as a lazyPath.
func (p jsonPath) lazy() lazyPath { return lazyPath{base: p} }

// key appends ".k" (see jsonPath.key) without spelling the path.
func (p lazyPath) key(k string) lazyPath {
	if p.n == len(p.keys) {
		return p.spell().lazy().key(k)
	}
	p.keys[p.n] = k
	p.n++
	return p
}

// spell returns the path spelled out.
func (p lazyPath) spell() jsonPath {
	s := p.base
	for _, k := range p.keys[:p.n] {
		s = s.key(k)
	}
	return s
}

// This file defines the helpers the loaders share: JSON paths written the
// way package statechart writes them, error collection, did-you-mean hints,
// and an ordered JSON object for the compiled machine.

package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// errs collects load errors.
type errs struct{ list statechart.ErrorList }

func (e *errs) add(p jsonx.Path, format string, args ...any) {
	e.list = append(e.list, &statechart.Error{Path: string(p), Msg: fmt.Sprintf(format, args...)})
}

// err returns the errors as an error, or nil.
func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return e.list
}

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s,
// if one is close enough to be a likely typo, else "".
func didYouMean(s string, candidates []string) string {
	return hint.DidYouMean(s, candidates)
}

// unknownKey is the message for a key that is not one of known.
func unknownKey(k string, known []string) string {
	if hint := didYouMean(k, known); hint != "" {
		return fmt.Sprintf("unknown key %q%s", k, hint)
	}
	return fmt.Sprintf("unknown key %q: the keys are %s", k, strings.Join(quoteAll(known), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// obj is a JSON object that keeps its keys in the order they were set
// (see [jsonx.Object]).
type obj struct{ jsonx.Object }

func newObj() *obj { return &obj{} }

// set sets k to v (a value encoding/json can marshal, *obj or
// json.RawMessage), keeping the position of a key set before.
func (o *obj) set(k string, v any) *obj {
	o.Set(k, v)
	return o
}

func (o *obj) len() int { return o.Len() }

// encode marshals v without escaping <, > and & (the compiled machine is
// read by people, not embedded in HTML).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// This file defines Extents, where each object and array of a document
// ends, found in one scan, so that reading an object's members skips its
// nested objects and arrays without scanning them again.

package jsonx

import (
	"math"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Extents records where every object and array of one valid JSON
// document starts and ends. gjson's ForEach finds the end of each nested
// value by scanning it, so a loader that reads an object's members, then
// each member object's members, and so on down, scans every byte once per
// level above it: a deep document costs its size times its depth. With
// Extents, Members skips a nested object or array in constant time.
//
// An Extents is not safe for concurrent use: it remembers the container
// it found last (a loader reads the document mostly in order, so the next
// one is most often a few containers on).
type Extents struct {
	doc        string
	containers []extent // in the order they open
	last       int      // the container find found last
}

// nearby is the number of containers after the last one found that find
// tries before it searches them all.
const nearby = 8

// extent is one object or array: its first and last byte, and the index
// of the next container that opens after it ends.
type extent struct {
	start, end, next int32
}

// NewExtents scans doc, which must be valid JSON (gjson.Valid), as Members
// and AppendMembers read it: values of gjson.Parse(doc). It returns nil for
// a document larger than 2 GB, which Members then reads without help.
func NewExtents(doc string) *Extents {
	if len(doc) > math.MaxInt32 {
		return nil
	}
	// Counted with the braces and brackets inside strings, as an upper bound:
	// the count is quicker than growing the list.
	x := &Extents{doc: doc, containers: make([]extent, 0, strings.Count(doc, "{")+strings.Count(doc, "["))}
	var open []int32 // the containers not closed yet
	var str Strings
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if str.Skip(c) {
			continue
		}
		switch c {
		case '"':
			str.Open()
		case '{', '[':
			open = append(open, int32(len(x.containers)))
			x.containers = append(x.containers, extent{start: int32(i)})
		case '}', ']':
			k := open[len(open)-1]
			open = open[:len(open)-1]
			x.containers[k].end = int32(i)
			x.containers[k].next = int32(len(x.containers))
		}
	}
	return x
}

// find returns the container whose text v is: v must come from the
// document (its Index is its offset there, as gjson sets it for values
// reached from gjson.Parse(doc) by ForEach). ok is false otherwise.
func (x *Extents) find(v gjson.Result) (k int, ok bool) {
	if x == nil || v.Type != gjson.JSON {
		return 0, false
	}
	k = -1
	if n := len(x.containers); x.last < n && int(x.containers[x.last].start) <= v.Index {
		for j := x.last; j < min(x.last+nearby, n) && int(x.containers[j].start) <= v.Index; j++ {
			if int(x.containers[j].start) == v.Index {
				k = j
				break
			}
		}
	}
	if k < 0 {
		k = sort.Search(len(x.containers), func(k int) bool { return int(x.containers[k].start) >= v.Index })
		if k == len(x.containers) || int(x.containers[k].start) != v.Index {
			return 0, false
		}
	}
	x.last = k
	// The text is compared too (in constant time when v.Raw is part of
	// the document: Go compares the pointers first), so that a value from
	// elsewhere is read by gjson, not taken for another.
	c := x.containers[k]
	if x.doc[c.start] != '{' {
		return 0, false // an array: gjson reads it
	}
	if n := int(c.end-c.start) + 1; len(v.Raw) < n || v.Raw[:n] != x.doc[c.start:c.end+1] {
		return 0, false
	}
	return k, true
}

// forEach calls fn for each member of object k, in document order, as
// gjson's ForEach would; it stops when fn returns false.
func (x *Extents) forEach(k int, fn func(key string, value gjson.Result) bool) {
	doc := x.doc
	c := x.containers[k]
	next := k + 1 // the next nested container to meet
	for i := int(c.start) + 1; i < int(c.end); i++ {
		if doc[i] != '"' {
			continue // whitespace and commas
		}
		key, end := stringAt(doc, i)
		i = end + 1
		for doc[i] != ':' {
			i++
		}
		i++
		for doc[i] <= ' ' {
			i++
		}
		var v gjson.Result
		switch doc[i] {
		case '{', '[':
			e := x.containers[next]
			v = gjson.Result{Type: gjson.JSON, Raw: doc[i : e.end+1]}
			next = int(e.next)
			end = int(e.end)
		case '"':
			_, end = stringAt(doc, i)
			v = gjson.Parse(doc[i : end+1])
		default: // a number, true, false or null
			end = i
			for end+1 < len(doc) && doc[end+1] > ' ' && doc[end+1] != ',' && doc[end+1] != '}' && doc[end+1] != ']' {
				end++
			}
			v = gjson.Parse(doc[i : end+1])
		}
		v.Index = i
		if !fn(key.Str, v) {
			return
		}
		i = end
	}
}

// stringAt reads the string that starts at doc[i] (a quote): its value,
// and the index of its closing quote.
func stringAt(doc string, i int) (gjson.Result, int) {
	var str Strings
	str.Open()
	escapes := false
	for j := i + 1; ; j++ {
		escapes = escapes || doc[j] == '\\'
		if str.Skip(doc[j]); str.InString() {
			continue
		}
		if escapes {
			return gjson.Parse(doc[i : j+1]), j // gjson unescapes it
		}
		return gjson.Result{Type: gjson.String, Raw: doc[i : j+1], Str: doc[i+1 : j]}, j
	}
}

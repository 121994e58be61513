//go:build goexperiment.jsonv2

// This file measures a well-kept streaming tokenizer (encoding/json/jsontext,
// the basis of encoding/json/v2; in Go 1.26 only with GOEXPERIMENT=jsonv2)
// against the hand-written scans the statechart loader runs before it reads
// a document: the depth limit (TooDeep), UTF-8 and syntax validation
// (utf8.Valid, gjson.ValidBytes) and the containers' extents (NewExtents).
// Run it with
//
//	GOEXPERIMENT=jsonv2 go test ./internal/jsonx -run Tokenizer -bench Prepass -benchmem

package jsonx

import (
	"bytes"
	"encoding/json/jsontext"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/benchgen"
)

// handPrepass is what statechart.Compile runs today before reading members.
func handPrepass(data []byte, maxDepth int) (*Extents, bool) {
	if TooDeep(data, maxDepth) || !utf8.Valid(data) || !gjson.ValidBytes(data) {
		return nil, false
	}
	return NewExtents(string(data)), true
}

// tokenPrepass does the same checks in one jsontext pass and records the
// extents from the decoder's offsets. Duplicate names are allowed: the
// loader reports them itself, with their paths, as it reads members.
func tokenPrepass(data []byte, maxDepth int) (*Extents, bool) {
	x := &Extents{doc: string(data)}
	var open []int32
	d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		switch tok.Kind() {
		case '{', '[':
			if d.StackDepth() > maxDepth {
				return nil, false
			}
			open = append(open, int32(len(x.containers)))
			x.containers = append(x.containers, extent{start: int32(d.InputOffset() - 1)})
		case '}', ']':
			k := open[len(open)-1]
			open = open[:len(open)-1]
			x.containers[k].end = int32(d.InputOffset() - 1)
			x.containers[k].next = int32(len(x.containers))
		}
		if d.StackDepth() == 0 {
			// A decoder reads a stream of values: one document is one.
			_, err := d.ReadToken()
			return x, err == io.EOF
		}
	}
}

// TestTokenizerPrepassAgrees: both prepasses accept the same documents and
// find the same extents, on the benchmark's machines and on random
// mutations of a small one.
func TestTokenizerPrepassAgrees(t *testing.T) {
	docs := [][]byte{benchgen.Flat(100), benchgen.Nested(100), []byte(` {"a":[1,{"b":"}"}],"a":2} `), []byte(`[[[[1]]]]`), []byte("{\"a\":\"\xff\"}")}
	r := rand.New(rand.NewPCG(1, 2))
	base := []byte(`{"id":"m","initial":"a","states":{"a":{"on":{"GO":"b"}},"b":{"tags":["x","y"]}}}`)
	for range 5000 {
		d := slices.Clone(base)
		for range 1 + r.IntN(3) {
			d[r.IntN(len(d))] = `{}[]",:\ ab1`[r.IntN(12)]
		}
		docs = append(docs, d)
	}
	for _, d := range docs {
		hx, hok := handPrepass(d, 4)
		tx, tok := tokenPrepass(d, 4)
		if hok != tok {
			t.Fatalf("%q: hand-written says %v, jsontext %v", d, hok, tok)
		}
		if hok && !slices.Equal(hx.containers, tx.containers) {
			t.Fatalf("%q: extents differ:\n%v\n%v", d, hx.containers, tx.containers)
		}
	}
}

func BenchmarkPrepass(b *testing.B) {
	for _, shape := range []struct {
		name string
		gen  func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		for _, n := range []int{1000, 10000} {
			data := shape.gen(n)
			for _, impl := range []struct {
				name string
				run  func([]byte, int) (*Extents, bool)
			}{{"hand", handPrepass}, {"jsontext", tokenPrepass}} {
				b.Run(fmt.Sprintf("%s/%s/%d", impl.name, shape.name, n), func(b *testing.B) {
					b.SetBytes(int64(len(data)))
					b.ReportAllocs()
					for b.Loop() {
						if _, ok := impl.run(data, 64); !ok {
							b.Fatal("rejected")
						}
					}
				})
			}
		}
	}
}

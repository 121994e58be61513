package jsonx

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestTooDeep(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want bool
	}{
		{`{}`, 1, false},
		{`{"a":[1]}`, 1, true},
		{`{"a":[1]}`, 2, false},
		{`{"a":"[[[[["}`, 1, false},
		{`{"a":"\"[[["}`, 1, false},
		{strings.Repeat("[", 300), 256, true},
	} {
		if got := TooDeep([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("TooDeep(%q, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestPositionAndSyntaxError(t *testing.T) {
	if l, c := Position([]byte("ab\ncd"), 4); l != 2 || c != 2 {
		t.Errorf("Position = %d:%d, want 2:2", l, c)
	}
	got := SyntaxError([]byte("{\n  \"a\": }"))
	if !strings.HasPrefix(got, "line 2, column 8: ") {
		t.Errorf("SyntaxError = %q", got)
	}
	if got := SyntaxError([]byte(`{}`)); got != "invalid document" {
		t.Errorf("SyntaxError of valid JSON = %q", got)
	}
}

func TestArrayIndex(t *testing.T) {
	for k, want := range map[string]bool{
		"0": true, "7": true, "4294967294": true,
		"": false, "01": false, "-1": false, "+1": false, "1_0": false,
		"4294967295": false, "12345678901": false, "a": false,
	} {
		if _, ok := ArrayIndex(k); ok != want {
			t.Errorf("ArrayIndex(%q) ok = %v, want %v", k, ok, want)
		}
	}
}

func TestMembers(t *testing.T) {
	for _, n := range []int{3, 40} { // small objects scan, large ones use a map
		var b strings.Builder
		b.WriteString(`{"b":1,"10":2,"a":3,"2":4,"b":5`)
		for i := range n {
			b.WriteString(`,"k` + strings.Repeat("x", i) + `":0`)
		}
		b.WriteString(`,"a":6}`)
		var dups []string
		ms := Members(gjson.Parse(b.String()), func(k string) { dups = append(dups, k) })
		var keys []string
		for _, m := range ms[:4] {
			keys = append(keys, m.Key+"="+m.Value.Raw)
		}
		if want := []string{"2=4", "10=2", "b=1", "a=3"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("n=%d: keys = %v, want %v", n, keys, want)
		}
		if want := []string{"b", "a"}; !reflect.DeepEqual(dups, want) {
			t.Errorf("n=%d: dups = %v, want %v", n, dups, want)
		}
		if len(ms) != 4+n {
			t.Errorf("n=%d: %d members, want %d", n, len(ms), 4+n)
		}
	}
	if ms := Members(gjson.Parse(`{"a":1,"a":2}`), nil); len(ms) != 1 || ms[0].Value.Raw != "1" {
		t.Errorf("Members with nil dup = %v", ms)
	}
}

// TestAppendMembers: the members of an object are appended after what the
// buffer holds, which they leave as it is; a key of the buffer's earlier
// members is no duplicate, and sorting array-index keys sorts only the
// object's own members.
func TestAppendMembers(t *testing.T) {
	for _, n := range []int{3, 40} { // small objects scan, large ones use a map
		var b strings.Builder
		b.WriteString(`{"z":1,"3":2,"x":3,"z":4`)
		for i := range n {
			b.WriteString(`,"k` + strings.Repeat("x", i) + `":0`)
		}
		b.WriteString(`}`)
		buf := Members(gjson.Parse(`{"x":0,"9":0}`), nil)
		var dups []string
		out := AppendMembers(buf, gjson.Parse(b.String()), func(k string) { dups = append(dups, k) })
		var keys []string
		for _, m := range out[:5] {
			keys = append(keys, m.Key+"="+m.Value.Raw)
		}
		if want := []string{"9=0", "x=0", "3=2", "z=1", "x=3"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("n=%d: keys = %v, want %v", n, keys, want)
		}
		if want := []string{"z"}; !reflect.DeepEqual(dups, want) {
			t.Errorf("n=%d: dups = %v, want %v", n, dups, want)
		}
		if len(out) != 2+3+n {
			t.Errorf("n=%d: %d members, want %d", n, len(out), 2+3+n)
		}
	}
}

func TestHasMembers(t *testing.T) {
	for doc, want := range map[string]bool{`{}`: false, "{ \n\t}": false, `{"a":{}}`: true, ` {"":1}`: true, `[1]`: false, `"{x}"`: false} {
		if got := HasMembers(gjson.Parse(doc)); got != want {
			t.Errorf("HasMembers(%s) = %v, want %v", doc, got, want)
		}
	}
}

func TestGoValue(t *testing.T) {
	got := GoValue(gjson.Parse(`{"a":[1,"x",true,false,null,{}],"a":2,"b":[]}`))
	want := map[string]any{"a": []any{1.0, "x", true, false, nil, map[string]any{}}, "b": []any{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GoValue = %#v, want %#v", got, want)
	}
}

func TestKind(t *testing.T) {
	doc := gjson.Parse(`{"n":null,"t":true,"f":false,"i":1,"s":"x","a":[],"o":{}}`)
	for path, want := range map[string]string{
		"missing": "nothing", "n": "null", "t": "a boolean", "f": "a boolean",
		"i": "a number", "s": "a string", "a": "an array", "o": "an object",
	} {
		if got := Kind(doc.Get(path)); got != want {
			t.Errorf("Kind(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestStatePath(t *testing.T) {
	for in, want := range map[string][]string{
		"":       {""},
		"a":      {"a"},
		"a.b":    {"a", "b"},
		`a\.b.c`: {"a.b", "c"},
		`a\\.b`:  {`a\`, "b"},
		`a.b\`:   {"a", "b"},
		".a.":    {"", "a", ""},
	} {
		if got := StatePath(in); !reflect.DeepEqual(got, want) {
			t.Errorf("StatePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAppendStatePathMatchesToStatePath checks AppendStatePath against a
// plain transcription of XState's toStatePath (a builder per segment), on
// the usual shapes and on random strings of dots, backslashes and letters,
// and that it splits a plain path into room the caller gave without
// allocating.
func TestAppendStatePathMatchesToStatePath(t *testing.T) {
	toStatePath := func(s string) []string {
		var out []string
		var seg strings.Builder
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					seg.WriteByte(s[i+1])
					i++
				}
				continue
			case '.':
				out = append(out, seg.String())
				seg.Reset()
				continue
			}
			seg.WriteByte(s[i])
		}
		return append(out, seg.String())
	}
	paths := []string{"", ".", "a", "a.b", "a..b", "a.", ".a", "a.b.c.d", "a.b.c.d.e.f.g.h.i", `a\.b`, `a\\.b`, `#x.y`, "....", `\`, `a\`, `\\\.`}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = "ab.\\"[r.IntN(4)]
		}
		paths = append(paths, string(b))
	}
	for _, p := range paths {
		want := toStatePath(p)
		if got := StatePath(p); !reflect.DeepEqual(got, want) {
			t.Fatalf("StatePath(%q) = %q, want %q", p, got, want)
		}
		if got := AppendStatePath([]string{"x"}, p); !reflect.DeepEqual(got, append([]string{"x"}, want...)) {
			t.Fatalf("AppendStatePath(x, %q) = %q, want x then %q", p, got, want)
		}
	}
	var buf [4]string
	if n := testing.AllocsPerRun(100, func() { _ = AppendStatePath(buf[:0], "a.b.c") }); n != 0 {
		t.Errorf("a plain path into room for it: %v allocations, want 0", n)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"kitten", "sitting", 3},
		{"abc", "", 3},
		{"flaw", "lawn", 2},
		{strings.Repeat("a", 65), "a", 1 << 30},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPath(t *testing.T) {
	p := Path("").Key("states").Key("pay.ment").Key("on").Key("PAY").Index(0).Key("target")
	if want := `states["pay.ment"].on.PAY[0].target`; string(p) != want {
		t.Errorf("got %s, want %s", p, want)
	}
	if got := Path("").Key(""); got != `[""]` {
		t.Errorf(`an empty key: got %s, want [""]`, got)
	}
}

func TestText(t *testing.T) {
	if got := Text("idle"); got != "idle" {
		t.Errorf("a string: got %s", got)
	}
	if got := Text(map[string]any{"payment": "card"}); got != `{"payment":"card"}` {
		t.Errorf("a nested value: got %s", got)
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "s0", "#machine.a.b", "a b", `quote "x"`, `back\slash`, "<a> & b", "tab\tnew\nline", "\x00\x1f\x7f", "é ü 日本", "line\u2028sep\u2029", "bad \xff utf-8"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
		if n := StringLen(s); n != len(want) {
			t.Errorf("StringLen(%q) = %d, want %d", s, n, len(want))
		}
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.25, 1e6, 123456789, 1e20, 1e21, -1e21, 1e-6, 1e-7, 5e-324,
		math.MaxFloat64, -math.SmallestNonzeroFloat64, 1.5e300, 2.5e-300, 0.1 + 0.2, 1 << 53, 12.5e-10,
		1e15 - 1, -(1e15 - 1), 1e15, -1e15, 1e15 + 1, 999999999999999.5, -0.5, 0.5, 1 << 60, -(1 << 60)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, float64(r.Int64N(2e15)-1e15), float64(r.Int64N(2000)-1000))
	}
	for range 10000 {
		if f := math.Float64frombits(r.Uint64()); !math.IsInf(f, 0) && !math.IsNaN(f) {
			values = append(values, f)
		}
	}
	for _, f := range values {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat([]byte("x"), f); string(got) != "x"+string(want) {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got[1:], want)
		}
	}
}

func TestClone(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": 1.0}, "s"}, "n": nil}
	c := Clone(orig, nil).(map[string]any)
	c["a"].([]any)[0].(map[string]any)["b"] = 2.0
	c["x"] = true
	if orig["a"].([]any)[0].(map[string]any)["b"] != 1.0 || len(orig) != 2 {
		t.Fatalf("the copy shares with the original: %v", orig)
	}
	up := Clone(orig, func(v any) any {
		if s, ok := v.(string); ok {
			return s + "!"
		}
		return v
	}).(map[string]any)
	if up["a"].([]any)[1] != "s!" || up["n"] != nil {
		t.Fatalf("leaf not applied: %v", up)
	}
}

// TestPathJoinAndSegments: Join appends a relative path the way Key and
// Index would have, and Segments reads back every key and index.
func TestPathJoinAndSegments(t *testing.T) {
	for _, c := range []struct {
		prefix, rest, want string
	}{
		{"", "a.b", "a.b"},
		{"states.a", "", "states.a"},
		{"states.a", "on.GO", "states.a.on.GO"},
		{"states.a", "[2]", "states.a[2]"},
		{"states.a", `["x.y"].target`, `states.a["x.y"].target`},
	} {
		if got := Path(c.prefix).Join(Path(c.rest)); string(got) != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.prefix, c.rest, got, c.want)
		}
	}
	p := Path("states").Key("a b").Key("on").Key(`x."y`).Index(2).Key("target").Key("")
	want := []string{"states", "a b", "on", `x."y`, "2", "target", ""}
	if got := p.Segments(); !slices.Equal(got, want) {
		t.Errorf("%s.Segments() = %q, want %q", p, got, want)
	}
}

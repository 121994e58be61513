package shellpolicy_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/shellpolicy"
)

// nestedSubst returns depth command substitutions nested in one another:
// echo $(echo $(... true)).
func nestedSubst(depth int) string {
	return strings.Repeat("echo $(", depth) + "true" + strings.Repeat(")", depth)
}

// nestedIf returns depth if statements nested in one another, which nest
// without brackets.
func nestedIf(depth int) string {
	return strings.Repeat("if true; then ", depth) + "echo" + strings.Repeat("; fi", depth)
}

// wide returns n copies of a line nested 40 levels deep, joined by ";":
// the most a line may nest, many times over.
func wide(n int) string {
	one := nestedSubst(40)
	return strings.TrimSuffix(strings.Repeat(one+"; ", n), "; ")
}

// allocated returns the bytes allocated by f.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestDeepNesting checks that lines nested 16,000 and 64,000 levels deep
// (through $(...), and through if, which has no brackets) are refused
// under a deadline, within a memory bound proportional to the line, in
// every state, unknown commands allowed too.
func TestDeepNesting(t *testing.T) {
	p := shellpolicy.Policy{AllowUnknown: true}
	for _, depth := range []int{16000, 64000} {
		for name, line := range map[string]string{"subst": nestedSubst(depth), "if": nestedIf(depth)} {
			t.Run(fmt.Sprintf("%s-%d", name, depth), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				var d shellpolicy.Decision
				bytes := allocated(func() { d = p.CheckContext(ctx, line) })
				if d.Allowed {
					t.Fatalf("a line nested %d levels deep is allowed", depth)
				}
				if errors.Is(d.Err, context.DeadlineExceeded) {
					t.Fatalf("not decided within the deadline: %s", d.Reason)
				}
				if !strings.Contains(d.Reason, "64 levels deep") {
					t.Errorf("reason %q does not say how deep a line may nest", d.Reason)
				}
				// The parser's tree is a few hundred bytes per level; the
				// quadratic walk took 180 MB at depth 4,000 alone.
				if limit := uint64(len(line)) * 400; bytes > limit {
					t.Errorf("%d bytes allocated for a line of %d bytes, more than %d", bytes, len(line), limit)
				}
			})
		}
	}
}

// TestAllocsLinear checks that a line 40 levels deep repeated n and 4n
// times costs about 4 times the allocations, not 16.
func TestAllocsLinear(t *testing.T) {
	var p shellpolicy.Policy
	small, big := wide(50), wide(200)
	a := testing.AllocsPerRun(3, func() { p.Check(small) })
	b := testing.AllocsPerRun(3, func() { p.Check(big) })
	if b > 5*a {
		t.Errorf("allocations grow from %.0f to %.0f for 4 times the line", a, b)
	}
	ba, bb := allocated(func() { p.Check(small) }), allocated(func() { p.Check(big) })
	if bb > 5*ba {
		t.Errorf("bytes allocated grow from %d to %d for 4 times the line", ba, bb)
	}
	if d := p.Check(big); !d.Allowed {
		t.Errorf("a line nested 40 levels deep is refused: %s", d.Reason)
	}
}

// TestCheckContextDeadline checks that a deadline that has passed refuses
// the line with a reason saying so.
func TestCheckContextDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var p shellpolicy.Policy
	d := p.CheckContext(ctx, "ls")
	var le *shellpolicy.LimitError
	if d.Allowed || !errors.As(d.Err, &le) || !errors.Is(d.Err, context.Canceled) {
		t.Fatalf("a line checked after its deadline: allowed=%v err=%v", d.Allowed, d.Err)
	}
	if !strings.Contains(d.Reason, "could not be checked in time") {
		t.Errorf("reason %q", d.Reason)
	}
	// A deadline far away decides as Check does.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d := p.CheckContext(ctx, "ls; rm -rf /"); d.Allowed || d.Reason != p.Check("ls; rm -rf /").Reason {
		t.Errorf("CheckContext and Check differ: %v %q", d.Allowed, d.Reason)
	}
}

// FuzzLinear checks, for any text repeated, that the analysis of 4 copies
// costs at most about 4 times as many allocations as one copy (plus a
// constant): nothing in the walk grows with the square of the line.
func FuzzLinear(f *testing.F) {
	f.Add("echo $(echo $(echo $(true)))", uint8(1))
	f.Add("a && b || (c; { d; })", uint8(2))
	f.Add("bash -c 'eval \"x $(y)\"'", uint8(3))
	f.Add(nestedSubst(30), uint8(0))
	f.Fuzz(func(t *testing.T, unit string, sep uint8) {
		if len(unit) > 2000 {
			return
		}
		join := []string{"\n", "; ", " && ", " | "}[int(sep)%4]
		p := fuzzPolicies[len(fuzzPolicies)-1] // with a protection
		one := strings.Repeat(unit+join, 2) + unit
		four := strings.Repeat(unit+join, 8) + unit
		a := testing.AllocsPerRun(1, func() { p.Check(one) })
		b := testing.AllocsPerRun(1, func() { p.Check(four) })
		if b > 4*a+200 {
			t.Fatalf("%q: %.0f allocations for 3 copies, %.0f for 9", unit, a, b)
		}
	})
}

// TestWalkDepth checks the walk's own bound, for nesting the brackets do
// not show: commands run by commands (sudo sudo ... true), 100 deep, are
// refused in every state.
func TestWalkDepth(t *testing.T) {
	p := shellpolicy.Policy{AllowUnknown: true, AllowedCommands: []string{"*", "sudo *"}}
	line := strings.Repeat("sudo ", 100) + "true"
	d := p.Check(line)
	if d.Allowed || !strings.Contains(d.Reason, "nested more than 64 levels deep") || !strings.Contains(d.Reason, "refused in every state") {
		t.Fatalf("%q: allowed=%v reason=%q", line, d.Allowed, d.Reason)
	}
	if d := p.Check(strings.Repeat("sudo ", 30) + "true"); !d.Allowed {
		t.Errorf("30 levels are refused: %s", d.Reason)
	}
}

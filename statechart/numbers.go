// This file defines numberBoxes, from which a runner takes the interfaces
// that hold the numbers an assign computes, so that a counter does not
// allocate on every event.

package statechart

import (
	"math"
	"unsafe"
)

// smallNumbers holds the integers 0..255 as float64 in interfaces, so that
// counters (an assign's $inc) do not allocate while they are small. It is
// never changed.
var smallNumbers = func() (t [256]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// boxNumber returns f as an interface, without allocating for the
// integers 0..255 (negative zero keeps its sign).
func boxNumber(f float64) any {
	if v, ok := smallNumber(f); ok {
		return v
	}
	return f
}

// smallNumber returns f's interface from smallNumbers, if it is there.
func smallNumber(f float64) (any, bool) {
	if f >= 0 && f < float64(len(smallNumbers)) && f == math.Trunc(f) && !math.Signbit(f) {
		return smallNumbers[int(f)], true
	}
	return nil, false
}

// numberChunk is how many numbers one allocation of numberBoxes holds. A
// number kept in a context keeps its whole chunk alive (256 bytes), so the
// chunk stays small.
const numberChunk = 32

// numberBoxes hands out float64 values in interfaces whose values are
// taken, numberChunk at a time, from one allocation rather than one each,
// as Go boxes a float64. A value is written once, before its interface is
// handed out, and never again: the interfaces are as immutable as Go's.
type numberBoxes struct {
	free []float64
}

// float64Type is the type word of an interface holding a float64.
var float64Type = (*eface)(unsafe.Pointer(&smallNumbers[0])).typ

// eface is the layout of an interface with no methods.
type eface struct {
	typ, data unsafe.Pointer
}

// box returns f as an interface, without allocating for the integers
// 0..255, and otherwise from the current chunk.
func (b *numberBoxes) box(f float64) any {
	if v, ok := smallNumber(f); ok {
		return v
	}
	if len(b.free) == 0 {
		b.free = make([]float64, numberChunk)
	}
	p := &b.free[0]
	b.free = b.free[1:]
	*p = f
	var v any
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: float64Type, data: unsafe.Pointer(p)}
	return v
}

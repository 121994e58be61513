// This file fuzzes the reading of a notification's payload.

package pgstore

import (
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
)

// FuzzParseChange checks that a payload as the store's SQL writes it
// ("VERSION HEXKEY") reads back as the change, and that any other payload
// is read without a panic.
func FuzzParseChange(f *testing.F) {
	f.Add(uint64(1), []byte("mcpbind:flow:session:a"), "1 6b")
	f.Add(uint64(1<<63-1), []byte{0, 0xff, ' '}, "x y z")
	f.Add(uint64(0), []byte{}, "12 zz")
	f.Fuzz(func(t *testing.T, version uint64, key []byte, junk string) {
		payload := strconv.FormatUint(version, 10) + " " + hex.EncodeToString(key)
		c, ok := parseChange(payload)
		if !ok || c != (mcpbind.Change{Key: string(key), Version: version}) {
			t.Fatalf("parseChange(%q) = %+v, %v; want key %q, version %d", payload, c, ok, key, version)
		}
		_, _ = parseChange(junk)
	})
}

package mcpbind

import (
	"strconv"
	"testing"
)

// TestViewCacheBound: the cache of handle views keeps the newest
// maxHandleViews keys and answers only for the cached version.
func TestViewCacheBound(t *testing.T) {
	var c viewCache
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	for i := range maxHandleViews + 10 {
		c.put(key(i), &view{version: uint64(i + 1)})
	}
	if len(c.views) != maxHandleViews {
		t.Fatalf("%d views cached, want %d", len(c.views), maxHandleViews)
	}
	if c.get(key(0), 1) != nil || c.get(key(9), 10) != nil {
		t.Fatal("the oldest keys were kept")
	}
	if c.get(key(10), 11) == nil || c.get(key(maxHandleViews+9), uint64(maxHandleViews+10)) == nil {
		t.Fatal("a newer key was dropped")
	}
	if c.get(key(10), 12) != nil {
		t.Fatal("a view answered for another version")
	}
	c.put(key(10), &view{version: 12}) // an update does not evict
	if len(c.views) != maxHandleViews || c.get(key(11), 12) == nil {
		t.Fatal("updating a cached key evicted another")
	}
}

package core

import (
	"strconv"
	"testing"
)

// TestViewCacheBound: the cache of handle views keeps the newest
// maxHandleViews keys and answers only for the cached version.
func TestViewCacheBound(t *testing.T) {
	var c ViewCache
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	for i := range MaxHandleViews + 10 {
		c.Put(key(i), &View{Version: uint64(i + 1)})
	}
	if len(c.Views) != MaxHandleViews {
		t.Fatalf("%d views cached, want %d", len(c.Views), MaxHandleViews)
	}
	if c.Get(key(0), 1) != nil || c.Get(key(9), 10) != nil {
		t.Fatal("the oldest keys were kept")
	}
	if c.Get(key(10), 11) == nil || c.Get(key(MaxHandleViews+9), uint64(MaxHandleViews+10)) == nil {
		t.Fatal("a newer key was dropped")
	}
	if c.Get(key(10), 12) != nil {
		t.Fatal("a view answered for another version")
	}
	c.Put(key(10), &View{Version: 12}) // an update does not evict
	if len(c.Views) != MaxHandleViews || c.Get(key(11), 12) == nil {
		t.Fatal("updating a cached key evicted another")
	}
}

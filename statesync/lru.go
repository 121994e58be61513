// This file defines the bounded least-recently-used cache of resolutions.

package statesync

// lru maps tool names to resolutions, holding at most cap entries and
// evicting the least recently used one when full. It is not safe for
// concurrent use; Layer guards it with its mutex.
type lru struct {
	cap  int
	m    map[string]*lruEntry
	root lruEntry // sentinel of a circular list, most recent first
}

type lruEntry struct {
	key        string
	val        *entry
	prev, next *lruEntry
}

func newLRU(capacity int) *lru {
	c := &lru{cap: capacity, m: make(map[string]*lruEntry, min(capacity, 256))}
	c.root.prev, c.root.next = &c.root, &c.root
	return c
}

func (c *lru) get(key string) (*entry, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.moveToFront(e)
	return e.val, true
}

func (c *lru) put(key string, val *entry) {
	if e, ok := c.m[key]; ok {
		e.val = val
		c.moveToFront(e)
		return
	}
	var e *lruEntry
	if len(c.m) >= c.cap {
		// Reuse the least recently used entry.
		e = c.root.prev
		c.unlink(e)
		delete(c.m, e.key)
		e.key, e.val = key, val
	} else {
		e = &lruEntry{key: key, val: val}
	}
	c.m[key] = e
	c.pushFront(e)
}

func (c *lru) remove(key string) {
	if e, ok := c.m[key]; ok {
		c.unlink(e)
		delete(c.m, key)
	}
}

func (c *lru) purge() {
	clear(c.m)
	c.root.prev, c.root.next = &c.root, &c.root
}

func (c *lru) len() int { return len(c.m) }

// keys returns the keys from most to least recently used.
func (c *lru) keys() []string {
	var out []string
	for e := c.root.next; e != &c.root; e = e.next {
		out = append(out, e.key)
	}
	return out
}

func (c *lru) moveToFront(e *lruEntry) {
	if c.root.next == e {
		return
	}
	c.unlink(e)
	c.pushFront(e)
}

func (c *lru) unlink(e *lruEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (c *lru) pushFront(e *lruEntry) {
	e.prev = &c.root
	e.next = c.root.next
	c.root.next.prev = e
	c.root.next = e
}

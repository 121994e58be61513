// This file exposes internals to the tests of package redisstore_test.

package redisstore

// SetSplitAbove sets the size from which CompareAndSwapSplit keeps a
// record's history apart (0: always).
func (s *Store) SetSplitAbove(n int) { s.splitAbove = n }

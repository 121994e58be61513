//go:build !unix

package sqlitestore_test

import "time"

// cpuTime returns 0 where the process' CPU time is not read.
func cpuTime() time.Duration { return 0 }

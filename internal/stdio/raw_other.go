//go:build !linux

package stdio

import (
	"io"
	"os"
)

// Raw returns f: raw system calls are used on Linux only (see the Linux
// version for why).
func Raw(f *os.File) io.ReadWriteCloser { return f }

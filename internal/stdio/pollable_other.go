//go:build !unix

package stdio

import (
	"io"
	"os"
)

// Pollable returns f: on this system a server's standard input and
// output are used as they are (see the Unix version for why it matters
// there).
func Pollable(f *os.File) io.ReadWriteCloser { return f }

// PollableWriter returns f, which closing it does not close.
func PollableWriter(f *os.File) io.WriteCloser { return nopCloser{f} }

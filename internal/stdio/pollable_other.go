//go:build !unix

package stdio

import (
	"io"
	"os"
)

// Pollable returns f: on this system a server's standard input is read as
// it is (see the Unix version for why it matters there).
func Pollable(f *os.File) io.ReadCloser { return f }

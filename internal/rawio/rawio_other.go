//go:build !linux

package rawio

import (
	"context"
	"io"
	"net"
	"os"
)

// File returns f.
func File(f *os.File) io.ReadWriteCloser { return f }

// Conn returns c.
func Conn(c net.Conn) net.Conn { return c }

// Listener returns l.
func Listener(l net.Listener) net.Listener { return l }

// Dialer returns d's DialContext.
func Dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.DialContext
}

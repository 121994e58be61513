// Package hookwire defines what the hook client (cmd/chartgate-hook) and
// the hook daemon (`chartgate hook-daemon`) say to each other over the
// daemon's Unix socket: one request, the hook's command line, input,
// working directory and environment; one response, the hook's output and
// exit code. It imports only the standard library's small packages, so
// that the client stays as quick to start as a trivial program.
package hookwire

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"strconv"
)

// MaxInput bounds the size of one hook event's input, in bytes (package
// hook's MaxInput). A tool's arguments can be large (a Write of a whole
// file), so the bound is loose.
const MaxInput = 64 << 20

// maxMeta bounds what a message holds besides the hook's input and
// output: the arguments, the directory, the environment; above what
// Linux lets a program's arguments and environment take together (a
// quarter of the stack limit's default 8 MiB), so that a client's request
// always fits.
const maxMeta = 8 << 20

// magic starts every message; its last byte is the protocol's version.
var magic = [4]byte{'c', 'g', 'h', 1}

// Request is one hook event, as the client received it.
type Request struct {
	// Args are the hook's arguments after "hook": HOST and its flags.
	Args []string
	// Stdin is the event, at most MaxInput+1 bytes (one more says it was
	// too large).
	Stdin []byte
	// Dir is the client's working directory.
	Dir string
	// Env is the client's environment, as os.Environ returns it.
	Env []string
}

// Response is the hook's answer.
type Response struct {
	Code           int
	Stdout, Stderr []byte
}

// SocketDir is the folder of the daemon's socket, from the environment
// getenv reads: $XDG_CONFIG_HOME/chartgate/hookd when XDG_CONFIG_HOME is
// absolute, else $HOME/.config/chartgate/hookd, in chartgate's user folder
// that no tool of an agent may name. It is "" without either.
func SocketDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "chartgate", "hookd")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "chartgate", "hookd")
	}
	return ""
}

// SocketName is the daemon's socket in SocketDir.
const SocketName = "sock"

// WriteRequest writes r to w.
func WriteRequest(w io.Writer, r *Request) error {
	var b []byte
	b = appendStrings(b, r.Args)
	b = appendBytes(b, r.Stdin)
	b = appendBytes(b, []byte(r.Dir))
	b = appendStrings(b, r.Env)
	return writeFrame(w, b)
}

// ReadRequest reads a request written by WriteRequest.
func ReadRequest(rd io.Reader) (*Request, error) {
	b, err := readFrame(rd, MaxInput+1+maxMeta)
	if err != nil {
		return nil, err
	}
	d := decoder{b: b}
	r := &Request{Args: d.strings(), Stdin: d.bytes(), Dir: string(d.bytes()), Env: d.strings()}
	return r, d.end()
}

// WriteResponse writes r to w.
func WriteResponse(w io.Writer, r *Response) error {
	var b []byte
	b = binary.AppendVarint(b, int64(r.Code))
	b = appendBytes(b, r.Stdout)
	b = appendBytes(b, r.Stderr)
	return writeFrame(w, b)
}

// ReadResponse reads a response written by WriteResponse.
func ReadResponse(rd io.Reader) (*Response, error) {
	// A pre tool answer can carry the tool's rewritten input, as large as
	// the event.
	b, err := readFrame(rd, 2*MaxInput+maxMeta)
	if err != nil {
		return nil, err
	}
	d := decoder{b: b}
	code := d.varint()
	r := &Response{Code: int(code), Stdout: d.bytes(), Stderr: d.bytes()}
	return r, d.end()
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendStrings(b []byte, v []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, s := range v {
		b = appendBytes(b, []byte(s))
	}
	return b
}

// writeFrame writes the magic, the body's length and the body.
func writeFrame(w io.Writer, body []byte) error {
	head := make([]byte, 0, 8+len(body))
	head = append(head, magic[:]...)
	head = binary.BigEndian.AppendUint32(head, uint32(len(body)))
	_, err := w.Write(append(head, body...))
	return err
}

// readFrame reads a frame whose body is at most limit bytes.
func readFrame(rd io.Reader, limit int) ([]byte, error) {
	var head [8]byte
	if _, err := io.ReadFull(rd, head[:]); err != nil {
		return nil, &readError{err}
	}
	if [4]byte(head[:4]) != magic {
		return nil, errors.New("hookwire: not a message of this version")
	}
	n := binary.BigEndian.Uint32(head[4:])
	if uint64(n) > uint64(limit) {
		return nil, errors.New("hookwire: a message of " + strconv.FormatUint(uint64(n), 10) + " bytes, over the bound of " + strconv.Itoa(limit))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(rd, b); err != nil {
		return nil, &readError{err}
	}
	return b, nil
}

// readError is a failed read of a message.
type readError struct{ err error }

func (e *readError) Error() string { return "hookwire: reading a message: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// decoder reads a body's fields; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("hookwire: a truncated message")

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	d.advance(n)
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	d.advance(n)
	return v
}

// advance skips the n bytes of a varint read; n <= 0 says none was.
func (d *decoder) advance(n int) {
	if n <= 0 {
		d.err = errShort
		return
	}
	d.b = d.b[n:]
}

// count reads a count of bytes or of strings (each takes at least one
// byte); a count past the bytes left is a lie, and reads as 0 with
// errShort.
func (d *decoder) count() uint64 {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errShort
	}
	if d.err != nil {
		return 0
	}
	return n
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) strings() []string {
	n := d.count()
	if d.err != nil {
		return nil
	}
	v := make([]string, 0, n)
	for range n {
		s := d.bytes()
		if d.err != nil {
			return nil
		}
		v = append(v, string(s))
	}
	return v
}

// end reports the first error, or one for bytes left over.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("hookwire: a message with bytes left over")
	}
	return d.err
}

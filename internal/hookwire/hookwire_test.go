package hookwire

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	req := &Request{Args: []string{"claude-code", "--event", "Stop"}, Stdin: []byte(`{"a":1}`), Dir: "/p", Env: []string{"HOME=/h", "X="}}
	var buf bytes.Buffer
	if err := WriteRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequest(&buf)
	if err != nil || !reflect.DeepEqual(got, req) {
		t.Fatalf("ReadRequest = %+v, %v; want %+v", got, err, req)
	}
	res := &Response{Code: -1, Stdout: []byte("out"), Stderr: []byte{}}
	buf.Reset()
	if err := WriteResponse(&buf, res); err != nil {
		t.Fatal(err)
	}
	gotRes, err := ReadResponse(&buf)
	if err != nil || gotRes.Code != -1 || string(gotRes.Stdout) != "out" || len(gotRes.Stderr) != 0 {
		t.Fatalf("ReadResponse = %+v, %v", gotRes, err)
	}
}

// TestBadMessages: a truncated, foreign, oversized or lying message is an
// error, never a panic or a huge allocation.
func TestBadMessages(t *testing.T) {
	var good bytes.Buffer
	if err := WriteRequest(&good, &Request{Args: []string{"a"}, Stdin: []byte("in")}); err != nil {
		t.Fatal(err)
	}
	frame := func(body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(append([]byte{}, magic[:]...), uint32(len(body))), body...)
	}
	huge := binary.BigEndian.AppendUint32(append([]byte{}, magic[:]...), 1<<31)
	for name, msg := range map[string][]byte{
		"empty":        nil,
		"truncated":    good.Bytes()[:good.Len()-1],
		"foreign":      append([]byte("GET / HTTP/1.1\r\n"), good.Bytes()...),
		"oversized":    huge,
		"lying count":  frame(binary.AppendUvarint(nil, 1<<40)),
		"lying length": frame(append(binary.AppendUvarint(nil, 1), binary.AppendUvarint(nil, 1<<40)...)),
		"left over":    frame(append(bytes.Clone(good.Bytes()[8:]), 0)),
		"bad varint":   frame([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
	} {
		if _, err := ReadRequest(bytes.NewReader(msg)); err == nil {
			t.Errorf("%s: ReadRequest accepted %q", name, msg)
		}
	}
}

// FuzzReadRequest: whatever the daemon is sent, reading it is an error
// or a request that, written again, reads the same, never a panic.
func FuzzReadRequest(f *testing.F) {
	var good bytes.Buffer
	if err := WriteRequest(&good, &Request{Args: []string{"claude-code", "--event", "Stop"}, Stdin: []byte(`{"a":1}`), Dir: "/p", Env: []string{"HOME=/h"}}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()-1])
	f.Fuzz(func(t *testing.T, msg []byte) {
		r, err := ReadRequest(bytes.NewReader(msg))
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := WriteRequest(&again, r); err != nil {
			t.Fatalf("WriteRequest of what ReadRequest read: %v", err)
		}
		if back, err := ReadRequest(&again); err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("read %+v from %q; written again, it reads %+v, %v", r, msg, back, err)
		}
	})
}

package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// TestPlainAllocates checks that telling a POST go-sdk would serve as a
// message of its session, which every call over HTTP asks, allocates
// nothing.
func TestPlainAllocates(t *testing.T) {
	h := &HTTPHandler{}
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	assert.True(t, h.plain(r))
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.plain(r) }))
}

// TestSessionAllocates checks that finding the session of a call, which
// every call over HTTP asks, allocates nothing once the session is known
// (here one not initialized, which session reads as none).
func TestSessionAllocates(t *testing.T) {
	h := &HTTPHandler{sessions: map[string]*mcp.ServerSession{"s": new(mcp.ServerSession)}}
	ss, _ := h.session("s")
	assert.Nil(t, ss)
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.session("s") }))
}

// TestLocalLoopback checks that a local address is a loopback one
// exactly when go-sdk, which reads it written out, says so.
func TestLocalLoopback(t *testing.T) {
	for _, a := range []net.Addr{
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
		&net.TCPAddr{IP: net.IPv4(127, 1, 2, 3)},
		&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 80, Zone: "lo"},
		&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 80, Zone: "eth0"},
		&net.TCPAddr{IP: net.IP{127, 0, 0}, Port: 80},
		&net.TCPAddr{Port: 80},
		(*net.TCPAddr)(nil),
		&net.UnixAddr{Name: "/tmp/sock", Net: "unix"},
	} {
		assert.Equal(t, loopback(a.String()), localLoopback(a), "%#v", a)
	}
}

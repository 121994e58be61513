package gateway

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readEvents reads every event of stream, and the error that ended it
// (nil at its end).
func readEvents(stream string) ([]event, error) {
	r := newEventReader(strings.NewReader(stream))
	var evs []event
	for {
		ev, err := r.next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// TestEventReader reads server-sent events as the SSE standard says: LF
// or CRLF line ends, data lines joined by LF, comments and unknown fields
// skipped, an event not ended by a blank line dropped.
func TestEventReader(t *testing.T) {
	evs, err := readEvents(": a comment\r\n" +
		"id: 1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n" +
		"retry: 250\nid:2\ndata: line one\ndata:line two\nfoo: bar\n\n" +
		"\n\n" +
		"data: cut off")
	require.NoError(t, err)
	assert.Equal(t, []event{
		{id: "1", name: "message", data: []byte(`{"a":1}`)},
		{id: "2", retry: 250 * time.Millisecond, data: []byte("line one\nline two")},
	}, evs)

	_, err = readEvents("data: " + strings.Repeat("x", maxAnswerBytes) + "\n\n")
	require.ErrorIs(t, err, errMalformed, "an event over the bound")
}

// FuzzEventReader: events written in SSE come back as they were, with LF
// or CRLF line ends; any input ends in events and an error, never a
// panic, reading each byte once.
func FuzzEventReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {}\n\n"), "7", "{\"jsonrpc\":\"2.0\"}", false)
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n"), "", "a\nb", true)
	f.Add([]byte(":\n\n\r\n\rdata"), "x", "", false)
	f.Fuzz(func(t *testing.T, raw []byte, id, data string, crlf bool) {
		r := newEventReader(bytes.NewReader(raw))
		for range len(raw) + 1 {
			if _, err := r.next(); err != nil {
				break
			}
		}

		// Values a server can write: no line breaks in the id, none but
		// LF in the data.
		if strings.ContainsAny(id, "\r\n\x00") || strings.Contains(data, "\r") || len(data) > 1<<16 {
			return
		}
		end := "\n"
		if crlf {
			end = "\r\n"
		}
		var b strings.Builder
		b.WriteString(": primed" + end)
		if id != "" {
			b.WriteString("id: " + id + end)
		}
		for line := range strings.SplitSeq(data, "\n") {
			b.WriteString("data: " + line + end)
		}
		b.WriteString(end)
		evs, err := readEvents(b.String())
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, id, evs[0].id)
		assert.Equal(t, data, string(evs[0].data))
	})
}

// TestEventStreamAnswerOwnsItsBytes checks that the answer read from a
// stream is not in the reading buffer, which the next stream's reading
// reuses.
func TestEventStreamAnswerOwnsItsBytes(t *testing.T) {
	s := &eventStream{}
	first, _, _, err := s.read(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"secret\":1}}\n\n"), "a")
	require.NoError(t, err)
	want := string(first)
	for range 10 {
		_, _, _, err := s.read(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{\"public\":2}}\n\n"), "b")
		require.NoError(t, err)
	}
	assert.Equal(t, want, string(first))
}

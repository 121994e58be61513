package hosttest

// This file is the scripted model endpoint the real hosts talk to: an
// httptest server on 127.0.0.1 that speaks just enough of three model APIs
// to drive an agent run (Anthropic Messages with SSE streaming, OpenAI
// Responses with SSE, Gemini streamGenerateContent), answers each agent
// turn with the next step of a script, and records every request, so that
// a test can read what the model was shown.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one turn of the scripted model: call a tool (Tool, with the JSON
// object Input), or say Text and stop. A Custom tool call is a freeform
// one (OpenAI's custom tools: Input is the raw string); a Search is the
// Responses API's client-side tool search (Input its arguments).
type step struct {
	Tool   string
	Input  string
	Custom bool
	Search bool
	// Namespace is the namespace of a Responses API function call (Codex
	// puts an MCP server's tools in one, mcp__<server>).
	Namespace string
	Text      string
}

// call is a step that calls a tool with a JSON object input.
func call(tool, input string) step { return step{Tool: tool, Input: input} }

// say is a step that says text and ends the turn.
func say(text string) step { return step{Text: text} }

// request is one recorded request to the endpoint.
type request struct {
	Path  string
	Body  []byte
	Agent bool      // an agent turn: it offered tools and was answered from the script
	Step  int       // the script step it was answered with, for agent turns
	At    time.Time // when it came
}

// endpoint is the scripted model.
type endpoint struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	script []step
	next   int
	reqs   []request
}

// newEndpoint starts a scripted model on loopback; it stops with the test.
func newEndpoint(t testing.TB, script []step) *endpoint {
	e := &endpoint{t: t, script: script}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

// URL is the endpoint's base URL.
func (e *endpoint) URL() string { return e.srv.URL }

// agentRequests returns the recorded agent turns, in order.
func (e *endpoint) agentRequests() []request {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []request
	for _, r := range e.reqs {
		if r.Agent {
			out = append(out, r)
		}
	}
	return out
}

// shownAfter returns what the model was newly shown in the agent turn
// that followed step i (the turn that carries step i's tool result): the
// strings of the messages that turn has beyond those of the turn before,
// unescaped and joined by newlines; "" if there was no such turn.
func (e *endpoint) shownAfter(i int) string {
	reqs := e.agentRequests()
	for k, r := range reqs {
		if r.Step == i+1 && k > 0 {
			return jsonText(newMessages(reqs[k-1].Body, r.Body))
		}
	}
	return ""
}

// messages returns the conversation of a request, in any of the three
// APIs' shapes (messages, input, contents).
func messages(body []byte) []json.RawMessage {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	for _, k := range []string{"messages", "input", "contents"} {
		var list []json.RawMessage
		if json.Unmarshal(req[k], &list) == nil && len(list) > 0 {
			return list
		}
	}
	return nil
}

// newMessages returns, as a JSON array, the messages of cur beyond those
// of prev.
func newMessages(prev, cur []byte) []byte {
	p, c := messages(prev), messages(cur)
	from := min(len(p), len(c))
	b, _ := json.Marshal(c[from:])
	return b
}

// dump writes every recorded request to the test log, for a failing run:
// its path, the tools it offered and its last two messages.
func (e *endpoint) dump() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, r := range e.reqs {
		e.t.Logf("model request %d %s at %s (agent %v, step %d, tools %v):\n%s", i, r.Path, r.At.Format("15:04:05.000"), r.Agent, r.Step, toolNames(r.Body), lastMessages(r.Body))
	}
}

// lastMessages returns the last two messages of a request, each cut to
// 1,500 bytes.
func lastMessages(body []byte) string {
	list := messages(body)
	var b strings.Builder
	for _, m := range list[max(0, len(list)-2):] {
		s := string(m)
		if len(s) > 1500 {
			s = s[:700] + " ... " + s[len(s)-700:]
		}
		b.WriteString(s + "\n")
	}
	return b.String()
}

// jsonText returns every string in a JSON document, joined by newlines:
// the text a model is shown, unescaped.
func jsonText(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return string(data)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return b.String()
}

func (e *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Tools  []json.RawMessage `json:"tools"`
		Stream bool              `json:"stream"`
	}
	_ = json.Unmarshal(body, &req) // a body that is not JSON offers no tools
	path := r.URL.Path
	api := ""
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 100}`)
		e.record(request{Path: path, Body: body})
		return
	case strings.HasSuffix(path, "/messages"):
		api = "anthropic"
	case strings.HasSuffix(path, "/responses"):
		api = "responses"
	case strings.Contains(path, ":streamGenerateContent"):
		api = "gemini-stream"
	case strings.Contains(path, ":generateContent"):
		api = "gemini"
	case strings.Contains(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens": 100}`)
		e.record(request{Path: path, Body: body})
		return
	case strings.HasSuffix(path, "/models") || strings.Contains(path, "/models/"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object": "list", "data": [], "models": []}`)
		e.record(request{Path: path, Body: body})
		return
	default:
		e.record(request{Path: path, Body: body})
		http.NotFound(w, r)
		return
	}
	st := step{Text: "OK."}
	rec := request{Path: path, Body: body}
	if len(req.Tools) > 0 && api != "gemini" {
		rec.Agent = true
		e.mu.Lock()
		rec.Step = e.next
		if e.next < len(e.script) {
			st = e.script[e.next]
			e.next++
		} else {
			st = step{Text: "The script is over."}
		}
		e.mu.Unlock()
	}
	e.record(rec)
	id := fmt.Sprintf("%d", rec.Step)
	switch api {
	case "anthropic":
		anthropicAnswer(w, st, id, req.Stream)
	case "responses":
		responsesAnswer(w, st, id)
	case "gemini-stream":
		geminiAnswer(w, st, true)
	case "gemini":
		geminiAnswer(w, st, false)
	}
}

func (e *endpoint) record(r request) {
	r.At = time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reqs = append(e.reqs, r)
}

// sse writes one server-sent event (event may be "").
func sse(w io.Writer, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // the endpoint's own maps always marshal
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

type obj = map[string]any

// anthropicAnswer answers a Messages request: the SSE stream of one
// message (message_start, one content block, message_delta with its stop
// reason, message_stop), or the message as JSON when not streaming.
func anthropicAnswer(w http.ResponseWriter, st step, id string, stream bool) {
	var block obj
	stop := "end_turn"
	if st.Tool != "" {
		var input any
		if err := json.Unmarshal([]byte(st.Input), &input); err != nil {
			panic(fmt.Sprintf("script step input %q: %v", st.Input, err))
		}
		block = obj{"type": "tool_use", "id": "toolu_" + id, "name": st.Tool, "input": input}
		stop = "tool_use"
	} else {
		block = obj{"type": "text", "text": st.Text}
	}
	usage := obj{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := obj{"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	start := obj{"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	sse(w, "message_start", obj{"type": "message_start", "message": start})
	if st.Tool != "" {
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "tool_use", "id": "toolu_" + id, "name": st.Tool, "input": obj{}}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "input_json_delta", "partial_json": st.Input}})
	} else {
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "text", "text": ""}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0,
			"delta": obj{"type": "text_delta", "text": st.Text}})
	}
	sse(w, "content_block_stop", obj{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": 10}})
	sse(w, "message_stop", obj{"type": "message_stop"})
}

// responsesAnswer answers an OpenAI Responses request with its SSE
// stream: response.created, one output item (a function call, a custom
// tool call or a message) added and done, response.completed.
func responsesAnswer(w http.ResponseWriter, st step, id string) {
	w.Header().Set("Content-Type", "text/event-stream")
	resp := obj{"id": "resp_" + id, "object": "response", "status": "in_progress", "model": "gpt-5", "output": []any{}}
	sse(w, "response.created", obj{"type": "response.created", "response": resp})
	var item obj
	switch {
	case st.Search:
		var args any
		if err := json.Unmarshal([]byte(st.Input), &args); err != nil {
			panic(fmt.Sprintf("script step input %q: %v", st.Input, err))
		}
		item = obj{"type": "tool_search_call", "id": "tsc_" + id, "call_id": "call_" + id, "execution": "client",
			"arguments": args, "status": "completed"}
	case st.Tool != "" && st.Custom:
		item = obj{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id, "name": st.Tool,
			"input": st.Input, "status": "completed"}
	case st.Tool != "":
		item = obj{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": st.Tool,
			"arguments": st.Input, "status": "completed"}
		if st.Namespace != "" {
			item["namespace"] = st.Namespace
		}
	default:
		item = obj{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{obj{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	}
	sse(w, "response.output_item.added", obj{"type": "response.output_item.added", "output_index": 0, "item": item})
	if st.Tool == "" {
		sse(w, "response.output_text.delta", obj{"type": "response.output_text.delta", "item_id": "msg_" + id,
			"output_index": 0, "content_index": 0, "delta": st.Text})
	}
	sse(w, "response.output_item.done", obj{"type": "response.output_item.done", "output_index": 0, "item": item})
	resp["status"] = "completed"
	resp["output"] = []any{item}
	resp["usage"] = obj{"input_tokens": 100, "input_tokens_details": obj{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 110}
	sse(w, "response.completed", obj{"type": "response.completed", "response": resp})
}

// geminiAnswer answers a Gemini generateContent request, streamed as SSE
// (streamGenerateContent?alt=sse) or not: one candidate with a function
// call or text, finishReason STOP.
func geminiAnswer(w http.ResponseWriter, st step, stream bool) {
	var part obj
	if st.Tool != "" {
		var args any
		if err := json.Unmarshal([]byte(st.Input), &args); err != nil {
			panic(fmt.Sprintf("script step input %q: %v", st.Input, err))
		}
		part = obj{"functionCall": obj{"name": st.Tool, "args": args}}
	} else {
		part = obj{"text": st.Text}
	}
	chunk := obj{
		"candidates":    []any{obj{"content": obj{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-pro",
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(chunk)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", chunk)
}

// toolNames lists the names of the tools a request offers, in the three
// APIs' shapes.
func toolNames(body []byte) []string {
	var req struct {
		Tools []struct {
			Name                 string `json:"name"`
			Type                 string `json:"type"`
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	var out []string
	for _, t := range req.Tools {
		switch {
		case t.Name != "":
			out = append(out, t.Name)
		case len(t.FunctionDeclarations) > 0:
			for _, f := range t.FunctionDeclarations {
				out = append(out, f.Name)
			}
		default:
			out = append(out, t.Type)
		}
	}
	return out
}

// quote writes s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

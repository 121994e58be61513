// This file defines the Go MCP servers the tests use as upstreams: the test
// binary itself, started again as a child with GATEWAY_TEST_UPSTREAM set,
// serving over stdio; or the same server in process over HTTP.

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
)

// Environment of a test upstream.
const (
	envMode  = "GATEWAY_TEST_UPSTREAM" // "full", "small", "rug", "held", "many" or "sleep"
	envName  = "GATEWAY_TEST_NAME"     // the server's name, in results
	envMarks = "GATEWAY_TEST_MARKS"    // a directory where it leaves marks
)

func TestMain(m *testing.M) {
	switch mode := os.Getenv(envMode); mode {
	case "":
		os.Exit(m.Run())
	case "sleep": // a grandchild, for the process-group test
		time.Sleep(time.Hour)
		os.Exit(0)
	default:
		server := newUpstreamServer(mode, os.Getenv(envName), os.Getenv(envMarks))
		// Standard input through the poller, as chartgate serve reads
		// its own: see stdio.Pollable.
		if err := server.Run(context.Background(), &mcp.IOTransport{Reader: stdio.Pollable(os.Stdin), Writer: os.Stdout}); err != nil {
			fmt.Fprintln(os.Stderr, "test upstream:", err)
		}
		os.Exit(0)
	}
}

// upstreamCommand configures the test binary as a stdio upstream.
func upstreamCommand(t testing.TB, name, mode, marks string) *gateway.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &gateway.ServerConfig{
		Name: name, Transport: gateway.TransportStdio, Command: exe,
		Env: map[string]string{envMode: mode, envName: name, envMarks: marks},
	}
}

// mark leaves a file named name in dir, holding text.
func mark(dir, name, text string) {
	if dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
}

type (
	echoIn struct {
		Text string `json:"text"`
	}
	echoOut struct {
		Text   string `json:"text"`
		Server string `json:"server"`
	}
	slowIn struct {
		Steps int `json:"steps"`
		// StepMillis is each step's length; the call waits for cancellation
		// after the last step if Hang is set.
		StepMillis int  `json:"stepMillis"`
		Hang       bool `json:"hang,omitempty"`
	}
	logIn struct {
		Level mcp.LoggingLevel `json:"level"`
		Text  string           `json:"text"`
	}
	empty struct{}
)

// newUpstreamServer builds the test upstream. "full" has tools, prompts,
// resources, templates, completions and logging; "small" only echo and a
// tool named after the server; "rug" echo and a tool that redefines it;
// "held" echo and held, which answers only after a ping; "many" 1,000
// tools.
func newUpstreamServer(mode, name, marks string) *mcp.Server {
	opts := &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			vals := []string{}
			for _, v := range []string{"alice", "albert", "bob"} {
				if len(v) >= len(req.Params.Argument.Value) && v[:len(req.Params.Argument.Value)] == req.Params.Argument.Value {
					vals = append(vals, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
		},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mark(marks, "subscribed", req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Instructions:       "Instructions of " + name + ".",
	}
	if mode != "full" {
		opts = nil
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, opts)
	pinged := make(chan struct{}, 1) // a ping came (for held)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
				mark(marks, "level", string(p.Level))
			}
			if method == "ping" {
				select {
				case pinged <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	if mode == "many" {
		for i := range 1000 {
			mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: fmt.Sprintf("Tool number %d, which takes a text.", i)},
				func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{}, nil, nil
				})
		}
		return s
	}
	echo := func(_ context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: in.Text}},
			Meta:    mcp.Meta{"upstream/meta": req.Params.Meta["client/meta"]},
		}, echoOut{Text: in.Text, Server: name}, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, echo)
	switch mode {
	case "rug":
		// A rug pull: redefine gives echo the description it is called
		// with (go-sdk then sends notifications/tools/list_changed).
		mcp.AddTool(s, &mcp.Tool{Name: "redefine"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: in.Text}, echo)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "redefined"}}}, nil, nil
		})
		return s
	case "held":
		// held answers once the server has read a ping after the call, as a
		// Go 1.26 server whose collection waits on its stdin read answers
		// once it reads another line (see internal/stdio's Pollable).
		mcp.AddTool(s, &mcp.Tool{Name: "held"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			select {
			case <-pinged: // one that came before the call
			default:
			}
			select {
			case <-pinged:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
		return s
	case "small":
		mcp.AddTool(s, &mcp.Tool{Name: "only_" + name}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
		})
		return s
	}
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails as a tool."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: "it failed on purpose"}},
			Meta:    mcp.Meta{"why": "purpose"},
		}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Takes steps, with progress."}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-ctx.Done():
				mark(marks, "cancelled", "step "+strconv.Itoa(i))
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.StepMillis) * time.Millisecond):
			}
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
			}
		}
		if in.Hang {
			<-ctx.Done()
			mark(marks, "cancelled", "hang")
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d steps done", in.Steps)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds the tool extra."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "extra"}, echo)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: in.Level, Logger: name, Data: in.Text})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, err
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Text}}},
		})
		if err != nil {
			return nil, nil, err
		}
		text, _ := res.Content.(*mcp.TextContent)
		if text == nil {
			return nil, nil, errors.New("sampling gave no text")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled: " + text.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["name"])}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a grandchild; returns its pid."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		exe, _ := os.Executable()
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envMode+"=sleep")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		go cmd.Wait()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(cmd.Process.Pid)}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["who"] + " (from " + name + ")"}},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://" + name + "/static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "static of " + name}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://" + name + "/item/{id}", Name: "item"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item " + req.Params.URI}}}, nil
		})
	return s
}

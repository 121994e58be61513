// Command deploy shows a workflow state that runs a job, on a go-sdk MCP
// server gated by package mcpbind. The workflow is the XState machine in
// deploy.json: a successful call of run_tests enters "testing", which
// invokes the test suite (a Go function, statechart.Promise). The gate
// runs the suite off the request; meanwhile the session sees only
// cancel_tests, and deploy is refused. When the suite passes, the invoke's
// onDone moves the workflow to "green", the session receives
// notifications/tools/list_changed, and deploy is visible. (A failing
// suite goes to "red"; cancel_tests stops the suite.)
//
// By default it runs a scripted in-memory MCP client and prints what it
// sees. With -stdio it serves over stdio, for an MCP client. With -sqlite
// FILE the workflow and its job are kept in a SQLite file: stop the
// server while the suite runs and start it again, and the suite runs
// again and lands (the stdio session's workflow is named "stdio", so that
// it outlives the process).
//
//	go run ./examples/deploy
//	go run ./examples/deploy -stdio -sqlite deploy.db -suite 30s
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

//go:embed deploy.json
var machineJSON []byte

func main() {
	serveStdio := flag.Bool("stdio", false, "serve over stdio instead of running the scripted demo")
	dbPath := flag.String("sqlite", "", "with -stdio: keep the workflow and its job in this SQLite file, so that a restarted server resumes the suite")
	suiteTime := flag.Duration("suite", 2*time.Second, "with -stdio: how long the test suite runs")
	flag.Parse()
	ctx := context.Background()
	if !*serveStdio {
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if err := demo(ctx, os.Stdout, logger); err != nil {
			log.Fatal(err)
		}
		return
	}
	opts := &mcpbind.Options{Logger: slog.Default()}
	if *dbPath != "" {
		store, err := sqlitestore.Open(*dbPath, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer store.Close()
		opts.Store = store
		opts.SessionKey = func(*mcp.ServerSession) string { return "stdio" }
		opts.ResumeJobsEvery = 5 * time.Second // resume the suite of a server that was stopped
	}
	server, gate, err := newServer(testSuite(*suiteTime, nil), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer gate.Close()
	// chartgate's stdio transport: see internal/stdio (standard input read
	// through the poller; bad lines answered, not fatal).
	if err := server.Run(ctx, &stdio.Transport{}); err != nil && !errors.Is(err, io.EOF) {
		log.Fatal(err)
	}
}

// testSuite is the job "testing" invokes: it runs the suite the call of
// run_tests named (its input is the call's arguments) for d, and returns
// the report, the event.output of xstate.done.actor.suite. It stops when
// its ctx is cancelled (cancel_tests, or the server stopping). If hold is
// not nil the suite starts only once hold is closed.
func testSuite(d time.Duration, hold <-chan struct{}) statechart.Promise {
	return func(ctx context.Context, input any) (any, error) {
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		suite, _ := input.(map[string]any)["suite"].(string)
		if suite == "" {
			suite = "all"
		}
		return map[string]any{"suite": suite, "passed": 42, "failed": 0}, nil
	}
}

type runTestsIn struct {
	Suite string `json:"suite,omitempty" jsonschema:"the suite to run (default all)"`
}

type started struct {
	Started string `json:"started"`
}

type deployed struct {
	Release string `json:"release"`
}

// newServer returns the deploy server, gated by deploy.json, whose test
// suite job runs suite.
func newServer(suite statechart.Promise, opts *mcpbind.Options) (*mcp.Server, *mcpbind.Gate, error) {
	m, err := statechart.Compile(machineJSON, &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{"testSuite": suite},
	}})
	if err != nil {
		return nil, nil, err
	}
	gate, err := mcpbind.New(m.Engine(), opts)
	if err != nil {
		return nil, nil, err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "run_tests", Description: "Start the test suite; deploy becomes available when it passes"},
		func(_ context.Context, _ *mcp.CallToolRequest, in runTestsIn) (*mcp.CallToolResult, started, error) {
			return nil, started{Started: "the " + cmpOr(in.Suite, "all") + " suite is running"}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "cancel_tests", Description: "Stop the running test suite"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, started, error) {
			return nil, started{Started: "cancelled"}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "deploy", Description: "Deploy the tested build"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, deployed, error) {
			return nil, deployed{Release: "r1"}, nil
		})
	gate.Attach(server)
	return server, gate, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// demo runs a scripted client against the server in memory and writes
// what it sees to w. It holds the suite until it has shown deploy
// refused, so that its output does not depend on timing.
func demo(ctx context.Context, w io.Writer, logger *slog.Logger) error {
	hold := make(chan struct{})
	server, gate, err := newServer(testSuite(0, hold), &mcpbind.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer gate.Close()
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	// A protocol with sessions: the session's tool list follows its
	// workflow (under 2026-07-28 it would use workflow handles).
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return err
	}
	defer cs.Close()

	show := func() error {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		s, err := gate.State(ctx, ss)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  state %-10q tools: %s\n", s.Value(), strings.Join(names, ", "))
		return nil
	}
	call := func(name string, args map[string]any) error {
		b, _ := json.Marshal(args)
		fmt.Fprintf(w, "\n→ %s %s\n", name, b)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = strings.SplitN(tc.Text, "\n", 2)[0]
			}
		}
		if res.IsError {
			fmt.Fprintf(w, "  refused: %s\n", text)
		} else {
			fmt.Fprintf(w, "  result: %s\n", text)
		}
		return nil
	}
	awaitChanged := func(what string) error {
		select {
		case <-changed:
			fmt.Fprintf(w, "  ← notifications/tools/list_changed (%s)\n", what)
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("no notifications/tools/list_changed after %s", what)
		}
	}

	fmt.Fprintln(w, "deploy workflow (deploy.json): run_tests starts the suite as a job")
	if err := show(); err != nil {
		return err
	}
	if err := call("run_tests", map[string]any{"suite": "unit"}); err != nil {
		return err
	}
	if err := awaitChanged("run_tests"); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}
	if err := call("deploy", map[string]any{}); err != nil {
		return err
	}
	close(hold) // the suite may finish now
	fmt.Fprintln(w, "\n… the suite runs off the request, and lands")
	if err := awaitChanged("the suite passed"); err != nil {
		return err
	}
	if err := show(); err != nil {
		return err
	}
	wf, err := gate.SessionWorkflow(ctx, ss)
	if err != nil {
		return err
	}
	last := wf.History[len(wf.History)-1]
	report, _ := json.Marshal(wf.State.Context()["report"])
	fmt.Fprintf(w, "  transition by %s: %s, report %s\n", last.By, last.Event.Type, report)
	if err := call("deploy", map[string]any{}); err != nil {
		return err
	}
	if err := awaitChanged("deploy"); err != nil {
		return err
	}
	return show()
}

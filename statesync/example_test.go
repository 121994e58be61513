package statesync_test

import (
	"context"
	"fmt"
	"log"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server with the seeds' policies, seen by a go-sdk client: descriptions
// carry their directive and a successful mutation starts with the notice.
func Example() {
	layer, err := statesync.New([]statesync.Policy{
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
		{Match: "countries.*", CacheControl: statesync.Immutable},
	}, &statesync.Options{Default: statesync.NoStore})
	if err != nil {
		log.Fatal(err)
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "sprints", Version: "1"}, nil)
	type sprint struct {
		Name string `json:"name"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "sprints_create", Description: "Create a new sprint."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sprint) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"created":"` + in.Name + `"}`}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "countries_list", Description: "List country codes."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `["DE","FR"]`}}}, nil, nil
		})
	server.AddReceivingMiddleware(layer.Middleware)

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sprints_create", Arguments: map[string]any{"name": "Sprint 7"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Content {
		fmt.Println(c.(*mcp.TextContent).Text)
	}
	// Output:
	// countries_list: List country codes. [Cache-Control: immutable]
	// sprints_create: Create a new sprint. [Cache-Control: no-store]
	// [System: Cache invalidated for sprints.* — caused by sprints.create]
	// {"created":"Sprint 7"}
}

func ExampleMatch() {
	fmt.Println(statesync.Match("sprints.*", "sprints.get"))
	fmt.Println(statesync.Match("sprints.*", "sprints.tasks.get"))
	fmt.Println(statesync.Match("sprints.*", "sprints"))
	fmt.Println(statesync.Match("*", "anything.at.all"))
	// Output:
	// true
	// true
	// false
	// true
}

func ExampleDetectOverlaps() {
	overlaps, err := statesync.DetectOverlaps([]statesync.Policy{
		{Match: "sprints.*", CacheControl: statesync.NoStore},
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}}, // shadowed
		{Match: "*.get", CacheControl: statesync.Immutable},           // competes with sprints.*
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range overlaps {
		fmt.Println(o.Kind, o)
	}
	// Output:
	// shadowed policy[0] (match: "sprints.*") shadows policy[1] (match: "sprints.update"). The later policy will never match because first-match-wins applies.
	// partial policy[0] (match: "sprints.*") partially overlaps policy[2] (match: "*.get"): a name such as "sprints.get" matches both and goes to policy[0] because first-match-wins applies.
}

func ExampleNew_errors() {
	_, err := statesync.New([]statesync.Policy{
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sp ace"},
		{Match: "countries.*", CacheControl: "max-age=60", Invalidates: []string{"a/b"}},
	}, &statesync.Options{Default: "public"})
	fmt.Println(err)
	// Output:
	// statesync: policy[1]: 'match' "sp ace" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"
	// statesync: policy[2]: invalid cacheControl "max-age=60". Allowed: "no-store", "immutable"
	// statesync: policy[2]: 'invalidates' entry 0: "a/b" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"
	// statesync: default cacheControl "public" is invalid. Allowed: "no-store", "immutable"
}

func ExampleDecorateDescription() {
	d := statesync.DecorateDescription("List country codes.", statesync.Immutable)
	fmt.Println(d)
	fmt.Println(statesync.DecorateDescription(d, statesync.NoStore))
	fmt.Println(statesync.DecorateDescription("", statesync.NoStore))
	// Output:
	// List country codes. [Cache-Control: immutable]
	// List country codes. [Cache-Control: no-store]
	// [Cache-Control: no-store]
}

// A gate running inside the layer adds what a transition invalidates.
func ExampleInvalidate() {
	layer, _ := statesync.New(nil, nil)
	gate := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && err == nil && !r.IsError {
				// The call succeeded and fired the transition bound to it.
				if err := statesync.Invalidate(ctx, "cart.*"); err != nil {
					return nil, err
				}
			}
			return res, err
		}
	}
	handler := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	chain := layer.Middleware(gate(handler)) // as AddReceivingMiddleware(layer.Middleware, gate) builds it
	res, _ := chain(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "cart_checkout"}})
	fmt.Println(res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text)
	// Output:
	// [System: Cache invalidated for cart.* — caused by cart.checkout]
}

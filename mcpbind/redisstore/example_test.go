package redisstore_test

import (
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/statechart/flat"
)

// A gate whose workflow states live in Redis, so that several instances of
// the server (behind a load balancer, over Streamable HTTP) share them.
// This example needs a Redis server, so it is compiled but not run.
func Example() {
	m, err := flat.Compile([]byte(`{
		"id": "checkout",
		"initial": "empty",
		"states": {
			"empty":     {"on": {"ADD_ITEM": "has_items"}},
			"has_items": {"on": {"CHECKOUT": "payment"}},
			"payment":   {"on": {"PAY": "confirmed"}},
			"confirmed": {"type": "final"}
		}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	gate, err := mcpbind.New(m, &mcpbind.Options{
		Store: redisstore.New(client, &redisstore.Options{TTL: 2 * time.Hour, Prefix: "shop:"}),
	})
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	// … add the tools and bind them, as in mcpbind's example …
	gate.Attach(server)
	// … serve it, e.g. with mcp.NewStreamableHTTPHandler …
}

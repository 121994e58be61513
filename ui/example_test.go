package ui_test

import (
	"fmt"
	"net"
	"strings"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/ui"
)

func Example() {
	config := []byte(`{"id": "door", "initial": "closed", "states": {"closed": {"on": {"OPEN": "opened"}}, "opened": {}}}`)
	m, err := statechart.Compile(config, nil)
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(m.Engine(), &mcpbind.Options{Store: mcpbind.NewMemoryStore(nil)})
	if err != nil {
		panic(err)
	}
	defer gate.Close()
	srv, err := ui.New(&ui.Options{Gate: gate, Chart: diagram.New(m, config)})
	if err != nil {
		panic(err)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	url, token, _ := strings.Cut(srv.LoginURL(addr), "token=")
	// srv.Serve(ctx, ln) serves on a listener until ctx is done.
	fmt.Println(url, len(token), "hex digits")
	// Output:
	// http://127.0.0.1:8080/login? 64 hex digits
}

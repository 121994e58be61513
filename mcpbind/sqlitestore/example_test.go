// This file holds the runnable examples of package sqlitestore.

package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart/flat"
)

// Two stores on one file, as in two processes (a gateway and a hook): a
// write of one is seen by the other, and a write from a stale version is
// refused with a conflict.
func Example() {
	dir, err := os.MkdirTemp("", "sqlitestore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, ".chartgate", "state.db")

	ctx := context.Background()
	gateway, err := sqlitestore.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer gateway.Close()
	hook, err := sqlitestore.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hook.Close()

	v1, err := gateway.CompareAndSwap(ctx, "session-1", 0, []byte(`"has_items"`))
	if err != nil {
		log.Fatal(err)
	}
	data, v, err := hook.Load(ctx, "session-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the hook sees %s (same version: %v)\n", data, v == v1)

	if _, err := hook.CompareAndSwap(ctx, "session-1", v, []byte(`"payment"`)); err != nil {
		log.Fatal(err)
	}
	_, err = gateway.CompareAndSwap(ctx, "session-1", v1, []byte(`"confirmed"`))
	fmt.Println("the gateway's stale write is a conflict:", errors.Is(err, mcpbind.ErrConflict))
	data, _, _ = gateway.Load(ctx, "session-1")
	fmt.Printf("the record is %s\n", data)
	// Output:
	// the hook sees "has_items" (same version: true)
	// the gateway's stale write is a conflict: true
	// the record is "payment"
}

// A gate whose workflow states live in the project's state file, shared
// with the other processes of the project that open it.
func Example_gate() {
	m, err := flat.Compile([]byte(`{"id": "review", "initial": "draft", "states": {
		"draft":     {"on": {"SUBMIT": "submitted"}},
		"submitted": {"type": "final"}
	}}`))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sqlitestore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlitestore.Open(filepath.Join(dir, sqlitestore.DefaultPath), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	gate, err := mcpbind.New(m, &mcpbind.Options{Store: store})
	if err != nil {
		log.Fatal(err)
	}
	_ = gate // … bind the tools and attach the gate to the server, as in mcpbind's example …
	fmt.Println("store at", filepath.Base(filepath.Dir(store.Path()))+"/"+filepath.Base(store.Path()))
	// Output: store at .chartgate/state.db
}

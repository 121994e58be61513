// This file holds a helper of the example.

package pgstore_test

import (
	"context"
	"log"

	"github.com/jackc/pgx/v5"
)

// dropSchema drops a schema the example made.
func dropSchema(ctx context.Context, server, name string) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
		log.Fatal(err)
	}
}

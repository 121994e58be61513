// Command sqliteonly opens the SQLite file its argument names with
// modernc.org/sqlite and exits: the floor of a process that opens
// chartgate's store itself (BenchmarkHookRatio).
package main

import (
	"database/sql"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	db, err := sql.Open("sqlite", os.Args[1])
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		os.Exit(1)
	}
	_ = db.Close()
}

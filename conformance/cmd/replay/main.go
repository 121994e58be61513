// Command replay runs conformance case files through chartgate's
// statechart interpreter and reports every case whose snapshots differ from
// the ones recorded from XState. A case with a restore step runs twice:
// restoring the snapshot chartgate persisted, and the one XState did.
//
//	go run ./conformance/cmd/replay DIR...
//
// It reads every *.json case under each DIR (recursively), prints one line
// per failing case with its first difference (want …, got …), and ends with
// the line "N passed, M failed". It exits 1 when a case failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/chartgate/chartgate/conformance"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: replay DIR...")
		flag.PrintDefaults()
	}
	verbose := flag.Bool("v", false, "also print a line for every passing case")
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx := context.Background()
	passed, failed := 0, 0
	for _, dir := range flag.Args() {
		cases, err := conformance.ReadDir(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replay:", err)
			os.Exit(2)
		}
		for _, c := range cases {
			if m := conformance.Check(ctx, c, conformance.RunStatechart); m != nil {
				failed++
				fmt.Println("FAIL", m)
				continue
			}
			if c.Restores() {
				// Also restore the snapshots XState persisted.
				if m := conformance.Check(ctx, c, conformance.RunStatechartFromXState); m != nil {
					failed++
					fmt.Println("FAIL (restoring XState's snapshot)", m)
					continue
				}
			}
			passed++
			if *verbose {
				fmt.Println("ok  ", c.Name)
			}
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

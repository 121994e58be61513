// Command difftest runs random differential tests: it generates random
// XState machines with step sequences, records each with real XState through
// one long-running oracle process (node conformance/oracle/record.mjs
// --serve), replays it on chartgate's statechart interpreter, and shrinks
// every difference to a minimal case.
//
//	go run ./conformance/cmd/difftest -seed S -n N [-out DIR]
//
// With -out, each shrunk difference is written as DIR/random/<seed>-<n>.json
// (use -out conformance/cases to add it to the corpus). The last line is the
// summary "N machines, D differences". It exits 1 when a difference was
// found or XState rejected a generated machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/chartgate/chartgate/conformance/random"
)

func main() {
	seed := flag.Uint64("seed", 1, "generator seed")
	n := flag.Int("n", 100, "number of machines")
	start := flag.Int("start", 0, "index of the first machine")
	out := flag.String("out", "", "directory that receives the shrunk differences as random/<seed>-<n>.json")
	oracleDir := flag.String("oracle", "", "the oracle directory (default: conformance/oracle of this module)")
	noShrink := flag.Bool("noshrink", false, "report differences without shrinking them")
	verbose := flag.Bool("v", false, "print progress")
	disable := flag.String("disable", "", "comma-separated generator features to turn off (see -features)")
	features := flag.Bool("features", false, "list the generator features -disable accepts")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *features {
		names := make([]string, 0, len(random.Features))
		for name := range random.Features {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Printf("%-20s %s\n", name, random.Features[name])
		}
		return
	}
	var cfg random.Config
	if *disable != "" {
		cfg.Disable = map[string]bool{}
		for _, f := range strings.Split(*disable, ",") {
			if _, ok := random.Features[f]; !ok {
				fmt.Fprintf(os.Stderr, "difftest: unknown feature %q (see -features)\n", f)
				os.Exit(2)
			}
			cfg.Disable[f] = true
		}
	}
	dir := *oracleDir
	if dir == "" {
		dir = defaultOracleDir()
	}
	o, err := random.StartOracle(dir, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		os.Exit(2)
	}
	defer o.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := random.Options{Seed: *seed, Start: *start, Config: cfg, Oracle: o, OutDir: *out, NoShrink: *noShrink, Log: os.Stdout}
	begin := time.Now()
	total := &random.Result{}
	// Run in batches so that progress can be shown.
	const batch = 500
	for done := 0; done < *n; {
		k := min(batch, *n-done)
		opts.N, opts.Start = k, *start+done
		res, err := random.Run(ctx, opts)
		if res != nil {
			total.Machines += res.Machines
			total.Invalid += res.Invalid
			total.InvalidErrors = append(total.InvalidErrors, res.InvalidErrors...)
			total.Differences = append(total.Differences, res.Differences...)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "difftest:", err)
			fmt.Println(total.Summary())
			os.Exit(2)
		}
		done += k
		if *verbose {
			fmt.Fprintf(os.Stderr, "%d/%d machines, %d differences, %s\n", done, *n, len(total.Differences), time.Since(begin).Round(time.Millisecond))
		}
	}
	for _, d := range total.Differences {
		if d.Path != "" {
			fmt.Println("wrote", d.Path)
		}
	}
	if *verbose {
		fmt.Fprintf(os.Stderr, "seed %d: %s in %s\n", *seed, total.Summary(), time.Since(begin).Round(time.Millisecond))
	}
	fmt.Println(total.Summary())
	if len(total.Differences) > 0 || total.Invalid > 0 {
		os.Exit(1)
	}
}

// defaultOracleDir finds conformance/oracle next to this source file, or
// under the working directory.
func defaultOracleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Join(filepath.Dir(file), "..", "..", "oracle")
		if _, err := os.Stat(filepath.Join(d, "record.mjs")); err == nil {
			return d
		}
	}
	for _, d := range []string{"conformance/oracle", "oracle", "."} {
		if _, err := os.Stat(filepath.Join(d, "record.mjs")); err == nil {
			return d
		}
	}
	return "conformance/oracle"
}

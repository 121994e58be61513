// Command chartgate validates, runs, draws and benchmarks XState v5
// machines with package statechart.
//
//	chartgate validate FILE... [--strict]
//	chartgate run FILE --events A,B,{"type":"C","x":1},+250ms [--clock simulated|real]
//	chartgate diagram FILE [--format mermaid|dot]
//	chartgate bench FILE --events A,B,C [-n N]
//
// FILE is an XState v5 machine config in JSON, or a conformance case file
// whose "machine" is run with the declarative "guards", "actions" and
// "delays" beside it.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

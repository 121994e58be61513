package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	nodeHint    = "install node 20 or later, then the pinned xstate: cd conformance/oracle && npm ci"
	installHint = "install the pinned version with: cd conformance/oracle && npm ci"
)

// scriptName is the node script, next to this command's sources.
const scriptName = "xstate_bench.mjs"

// nodeSetup is what running the XState side needs.
type nodeSetup struct {
	node    string // the node executable
	script  string // path of xstate_bench.mjs
	version string // node --version
	xstate  string // directory of the xstate package used
}

// findNode locates node, the bench script and an installed xstate, or says
// what is missing and how to install it.
func findNode(nodeBin string) (*nodeSetup, error) {
	node, err := exec.LookPath(nodeBin)
	if err != nil {
		return nil, fmt.Errorf("node not found (%v); %s", err, nodeHint)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v; %s", node, err, nodeHint)
	}
	dir, err := benchDir()
	if err != nil {
		return nil, err
	}
	ns := &nodeSetup{node: node, script: filepath.Join(dir, scriptName), version: strings.TrimSpace(string(out))}
	// The same search order as the script: its own node_modules, then the
	// oracle's pinned copy.
	for _, d := range []string{filepath.Join(dir, "node_modules", "xstate"), filepath.Join(dir, "..", "oracle", "node_modules", "xstate")} {
		if _, err := os.Stat(filepath.Join(d, "package.json")); err == nil {
			ns.xstate = d
			return ns, nil
		}
	}
	return nil, fmt.Errorf("the xstate package is not installed in conformance/oracle/node_modules; %s", installHint)
}

// benchDir finds conformance/bench from the working directory or one of
// its parents (go run sets no path for the sources of the command).
func benchDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, c := range []string{d, filepath.Join(d, "bench"), filepath.Join(d, "conformance", "bench")} {
			if _, err := os.Stat(filepath.Join(c, scriptName)); err == nil {
				return c, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("cannot find conformance/bench/%s above %s: run the command inside the chartgate module", scriptName, wd)
		}
	}
}

// xstateResult is the line the node script prints.
type xstateResult struct {
	Name         string         `json:"name"`
	Events       int            `json:"events"`
	Warmup       int            `json:"warmup"`
	NS           int64          `json:"ns"`
	EventsPerSec float64        `json:"eventsPerSec"`
	Value        any            `json:"value"`
	Context      map[string]any `json:"context"`
	Status       string         `json:"status"`
	Node         string         `json:"node"`
	XState       string         `json:"xstate"`
	Error        string         `json:"error"`
}

// runXState runs one machine in node, in its own process so that every
// machine starts from a cold JIT, as the Go side starts from a new actor.
func (ns *nodeSetup) runXState(bm *benchMachine, st stream) (*xstateResult, *result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ns.node, ns.script, "--n", strconv.Itoa(st.n), "--warmup", strconv.Itoa(st.warmup), "--rounds", strconv.Itoa(st.rounds), "-")
	cmd.Stdin = bytes.NewReader(bm.raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil, nil, errors.New(msg) // xstate not found; msg says how to install it
		}
		return nil, nil, fmt.Errorf("node %s %s: %v\n%s", scriptName, bm.file, err, msg)
	}
	var xr xstateResult
	if err := json.Unmarshal(stdout.Bytes(), &xr); err != nil {
		return nil, nil, fmt.Errorf("node %s %s: bad output %q: %v", scriptName, bm.file, stdout.String(), err)
	}
	if xr.Error != "" {
		return nil, nil, fmt.Errorf("xstate: %s: the actor failed: %s", bm.Name, xr.Error)
	}
	r := &result{
		Engine: "xstate", Events: xr.Events, NS: xr.NS, EventsPerSec: xr.EventsPerSec,
		Value: xr.Value, Context: xr.Context, Status: xr.Status,
	}
	return &xr, r, nil
}

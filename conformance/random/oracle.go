package random

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Oracle is one long-running `node record.mjs --serve` process: it reads a
// case per line and answers with the case filled in by real XState.
type Oracle struct {
	dir     string
	timeout time.Duration

	mu    sync.Mutex
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
	done  chan struct{}
	quit  chan struct{}
	// Restarts counts the times the process was restarted after a
	// timeout or a crash.
	Restarts int
}

// OracleAvailable reports why the oracle in dir cannot run, or nil: node
// must be on PATH and dir/node_modules/xstate installed (npm ci).
func OracleAvailable(dir string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "xstate")); err != nil {
		return fmt.Errorf("%s has no node_modules/xstate; run npm ci there", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "record.mjs")); err != nil {
		return fmt.Errorf("%s has no record.mjs", dir)
	}
	return nil
}

// StartOracle starts `node record.mjs --serve` in dir (conformance/oracle).
// A case that takes longer than timeout (default 10s) to answer is reported
// as an oracle error and the process is restarted.
func StartOracle(dir string, timeout time.Duration) (*Oracle, error) {
	if err := OracleAvailable(dir); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	o := &Oracle{dir: dir, timeout: timeout}
	if err := o.start(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Oracle) start() error {
	cmd := exec.Command("node", "record.mjs", "--serve")
	cmd.Dir = o.dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the oracle: %w", err)
	}
	lines := make(chan []byte)
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-quit:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	o.cmd, o.stdin, o.lines, o.done, o.quit = cmd, stdin, lines, done, quit
	return nil
}

func (o *Oracle) stop() {
	if o.cmd == nil {
		return
	}
	_ = o.stdin.Close()
	_ = o.cmd.Process.Kill()
	close(o.quit)
	<-o.done
	_ = o.cmd.Wait()
	o.cmd = nil
}

// Close stops the process.
func (o *Oracle) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd == nil {
		return nil
	}
	_ = o.stdin.Close()
	select {
	case <-o.done:
	case <-time.After(2 * time.Second):
	}
	_ = o.cmd.Process.Kill()
	close(o.quit)
	<-o.done
	_ = o.cmd.Wait()
	o.cmd = nil
	return nil
}

// ErrOracleTimeout is returned when XState did not answer in time (for
// example, a machine that loops forever).
var ErrOracleTimeout = errors.New("the oracle did not answer in time")

// Record sends one case (JSON without newlines) and returns the filled case.
// oracleError is XState's message when the case could not be built or run
// (createMachine threw); the filled case is then nil.
func (o *Oracle) Record(caseJSON []byte) (filled []byte, oracleError string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cmd == nil {
		if err := o.start(); err != nil {
			return nil, "", err
		}
	}
	var line bytes.Buffer
	if err := json.Compact(&line, caseJSON); err != nil {
		return nil, "", fmt.Errorf("case JSON: %w", err)
	}
	line.WriteByte('\n')
	if _, err := o.stdin.Write(line.Bytes()); err != nil {
		o.stop()
		o.Restarts++
		return nil, "", fmt.Errorf("writing to the oracle: %w", err)
	}
	timer := time.NewTimer(o.timeout)
	defer timer.Stop()
	select {
	case out := <-o.lines:
		var probe struct {
			OracleError *string `json:"oracleError"`
		}
		if err := json.Unmarshal(out, &probe); err != nil {
			return nil, "", fmt.Errorf("oracle answer: %w", err)
		}
		if probe.OracleError != nil {
			return nil, *probe.OracleError, nil
		}
		return bytes.TrimSpace(out), "", nil
	case <-o.done:
		o.stop()
		o.Restarts++
		return nil, "", errors.New("the oracle exited")
	case <-timer.C:
		o.stop()
		o.Restarts++
		return nil, "", ErrOracleTimeout
	}
}

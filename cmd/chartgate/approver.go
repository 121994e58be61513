package main

// This file defines what chartgate approve needs to prove that a person
// answers: the approver key, a secret in the user's configuration
// directory that the gate verifies each grant's token with, and the
// confirmation asked on the terminal.

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// approverKeyBytes is the size of a new approver key.
const approverKeyBytes = 32

// defaultKeyPath is where the approver key lives:
// $XDG_CONFIG_HOME/chartgate/approver.key, else
// ~/.config/chartgate/approver.key.
func defaultKeyPath() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "chartgate", "approver.key"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the approver key: %w", err)
	}
	return filepath.Join(home, ".config", "chartgate", "approver.key"), nil
}

// errNoKey is matched by readKey's error when there is no key file.
var errNoKey = errors.New("no approver key")

// readKey reads the approver key at path: hex, at least 32 bytes, in a
// file that only its owner may read or write.
func readKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", errNoKey, path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the approver key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the approver key %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the approver key %s may be read or written by others (mode %04o): make it 0600", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the approver key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < approverKeyBytes {
		return nil, fmt.Errorf("the approver key %s is not %d or more bytes in hex: write a new one with chartgate approve --init", path, approverKeyBytes)
	}
	return key, nil
}

// createKey writes a new random approver key at path, mode 0600 in a
// directory of mode 0700, unless a file is there already.
func createKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the approver key: %w", err)
	}
	var key [approverKeyBytes]byte
	if _, err := rand.Read(key[:]); err != nil {
		return fmt.Errorf("creating the approver key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating the approver key: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(key[:]) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("creating the approver key: %w", err)
	}
	return nil
}

// approver says who answers: the OS user running the command
// (authenticated: the process's own user id, not $USER), or the --by name,
// authenticated only if it is that user's name.
func approver(by string) (string, bool) {
	u, err := user.Current()
	if err != nil || u.Username == "" {
		if by == "" {
			by = "unknown user"
		}
		return by, false
	}
	if by == "" || by == u.Username {
		return u.Username, true
	}
	return by, false
}

// terminal is where chartgate approve asks the person to confirm: the
// controlling terminal (/dev/tty), never standard input, which a program
// running the command gives.
type terminal interface {
	io.ReadWriter
	Close() error
}

// openTTY opens the controlling terminal.
func openTTY() (terminal, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }

// confirm asks question on the terminal and reports whether the answer
// is yes.
func confirm(t terminal, question string) (bool, error) {
	if _, err := fmt.Fprintf(t, "%s [yes/no] ", question); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(io.LimitReader(t, 256)).ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return false, fmt.Errorf("reading the answer from the terminal: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

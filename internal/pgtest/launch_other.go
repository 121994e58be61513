//go:build !unix

package pgtest

// launch cannot start a server here: set EnvDSN.
func launch(string) (string, func(), error) { return "", nil, ErrUnavailable }

// Package redistest starts a redis-server of its own for a test: the
// Redis store's tests and the gate's tests on a real Redis use it.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SkipMessage is how the tests say that redis-server is missing.
const SkipMessage = "redis-server not found: install it (apt-get install -y redis-server) to run the Redis store tests"

// syncBuffer collects the output of redis-server, for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Start starts a redis-server of its own for the test, on a free loopback
// port, without persistence, and returns a client connected to it. Both
// are stopped when the test ends. Without redis-server the test is
// skipped.
func Start(t testing.TB) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip(SkipMessage)
	}
	var lastErr error
	for range 3 { // the free port may be taken before the server binds it
		client, err := tryStartRedis(t, bin)
		if err == nil {
			return client
		}
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil
}

func tryStartRedis(t testing.TB, bin string) (*redis.Client, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	client := redis.NewClient(&redis.Options{
		Addr:         net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		DialTimeout:  time.Second,
		ReadTimeout:  5 * time.Second,
		WriteTimeout: 5 * time.Second,
		PoolSize:     64,
		MaxRetries:   -1, // a test must see failures, not retries
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			_ = client.Close()
			return nil, fmt.Errorf("redis-server on port %d exited: %v\n%s", port, cmd.ProcessState, out.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = client.Close()
			stop()
			return nil, fmt.Errorf("redis-server on port %d does not answer PING: %v\n%s", port, err, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		_ = client.Close()
		stop()
	})
	return client, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

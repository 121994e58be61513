package main

import (
	"testing"
	"time"
)

// TestTrustPeer: only a daemon of the same user running the very
// chartgate beside the client is trusted (another uid cannot be made as
// root in a test, so the decision is checked here).
func TestTrustPeer(t *testing.T) {
	const chartgate = "/opt/chartgate/bin/chartgate"
	for _, c := range []struct {
		name      string
		peerUID   int
		peerExe   string
		want      bool
		chartgate string
	}{
		{"same user, same chartgate", 1000, chartgate, true, chartgate},
		{"another user", 0, chartgate, false, chartgate},
		{"another program", 1000, "/usr/bin/python3", false, chartgate},
		{"a chartgate replaced since it started", 1000, chartgate + " (deleted)", false, chartgate},
		{"another chartgate", 1000, "/home/u/go/bin/chartgate", false, chartgate},
		{"no chartgate found", 1000, "", false, ""},
	} {
		if got := trustPeer(c.peerUID, 1000, c.peerExe, c.chartgate); got != c.want {
			t.Errorf("%s: trustPeer = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDeadlineArg: the client waits past the hook's own --deadline.
func TestDeadlineArg(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"claude-code"}, 0},
		{[]string{"claude-code", "--deadline", "50s"}, 50 * time.Second},
		{[]string{"claude-code", "-deadline=2m"}, 2 * time.Minute},
		{[]string{"claude-code", "--event", "deadline"}, 0},
	} {
		if got := deadlineArg(c.args); got != c.want {
			t.Errorf("deadlineArg(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

package main

// This file defines the gate options that every command sharing a
// project's workflow records must agree on: serve, hook, and the
// out-of-band commands (status, history, approve).

import (
	"log/slog"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
)

// Defaults of the options the processes of a project agree on.
const (
	historyLimit    = 500              // run history entries kept per workflow
	defaultLeaseTTL = 10 * time.Second // serve's --lease-ttl default
)

// agreedGateOptions returns the gate options on which every process that
// writes a project's workflow records must agree: `chartgate serve` and the
// `chartgate hook` processes of one agent session keep its workflow in one
// record, and whoever writes last writes the whole record. So they keep
// the same run history (every gated call audited, the newest historyLimit
// entries), refuse the same tools (defaultDeny), hold a workflow the same
// time (leaseTTL), and stamp records with the same workflow version; the
// store keys agree by the default KeyPrefix.
func agreedGateOptions(p *project, logger *slog.Logger, defaultDeny bool, leaseTTL time.Duration) *mcpbind.Options {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &mcpbind.Options{
		Store:        p.store,
		Logger:       logger,
		AuditCalls:   true,
		HistoryLimit: historyLimit,
		DefaultDeny:  defaultDeny,
		LeaseTTL:     leaseTTL,
		// The hosts' own tools are gated by the hooks, not by a server.
		ExternalTools: hook.CanonicalTools(),
		// Records are stamped with the workflow file's digest: a record
		// saved by another version is migrated or refused (see
		// mcpbind.VersionError).
		WorkflowVersion: p.version,
	}
}

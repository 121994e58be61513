package main

// This file attaches OpenTelemetry to the serve command when the standard
// OTEL_* environment variables ask for it (package telemetry).

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/telemetry"
)

// serveTelemetry sets up the export the OTEL_* variables ask for, if any,
// and adds the hook that records the server's requests: after the
// workflow's, so that it sees the gate's refusals.
func serveTelemetry(o *serveOptions, stderr io.Writer, closers *[]func() error) int {
	p, err := telemetry.FromEnv(context.Background())
	if err != nil {
		fmt.Fprintf(stderr, "chartgate serve: OpenTelemetry (OTEL_* variables): %v\n", err)
		return exitFail
	}
	if p == nil {
		return exitOK // off: nothing attached
	}
	o.otel = p
	*closers = append(*closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return p.Shutdown(ctx)
	})
	o.hooks = append(o.hooks, func(_ context.Context, _ *gateway.Gateway, server *mcp.Server) error {
		if o.tel == nil { // no workflow: the requests alone
			if o.tel, err = telemetry.New(p.Options("")); err != nil {
				return err
			}
		}
		server.AddReceivingMiddleware(o.tel.Middleware)
		return nil
	})
	return exitOK
}

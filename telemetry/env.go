package telemetry

import (
	"context"
	"errors"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Providers are the tracer and meter providers [FromEnv] set up, and what
// flushes and stops them.
type Providers struct {
	Tracer *sdktrace.TracerProvider // nil when traces are off
	Meter  *sdkmetric.MeterProvider // nil when metrics are off
}

// Options returns the Options of [New] with these providers.
func (p *Providers) Options(workflow string) Options {
	o := Options{Workflow: workflow}
	if p.Tracer != nil {
		o.TracerProvider = p.Tracer
	}
	if p.Meter != nil {
		o.MeterProvider = p.Meter
	}
	return o
}

// Shutdown flushes what is buffered and stops the exporters.
func (p *Providers) Shutdown(ctx context.Context) error {
	var errs []error
	if p.Tracer != nil {
		errs = append(errs, p.Tracer.Shutdown(ctx))
	}
	if p.Meter != nil {
		errs = append(errs, p.Meter.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// FromEnv sets up OTLP/HTTP exporters of traces and metrics as the
// standard environment variables say: telemetry is on when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) is set, unless OTEL_SDK_DISABLED
// is true; OTEL_TRACES_EXPORTER=none or OTEL_METRICS_EXPORTER=none turns
// one signal off. The exporters read the other OTEL_EXPORTER_OTLP_*
// variables (headers, timeout, ...), and the resource OTEL_SERVICE_NAME
// (default chartgate) and OTEL_RESOURCE_ATTRIBUTES. It returns nil when
// telemetry is off.
func FromEnv(ctx context.Context) (*Providers, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	traces := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	metrics := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	traces = traces && os.Getenv("OTEL_TRACES_EXPORTER") != "none"
	metrics = metrics && os.Getenv("OTEL_METRICS_EXPORTER") != "none"
	if !traces && !metrics {
		return nil, nil
	}
	res := resource.Default()
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		var err error
		if res, err = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", "chartgate"))); err != nil {
			return nil, err
		}
	}
	p := &Providers{}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		p.Tracer = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			_ = p.Shutdown(ctx)
			return nil, err
		}
		p.Meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	return p, nil
}

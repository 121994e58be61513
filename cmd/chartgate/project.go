package main

// This file opens what the commands that act on running workflows share
// with `chartgate serve` and `chartgate hook`: the workflow file, the store
// and the gate over them.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/pgstore"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/workflow"
)

// Defaults of the project files, relative to the folder the command runs
// in.
const (
	defaultWorkflowFile = ".chartgate/workflow.json"
	defaultStore        = sqlitestore.DefaultPath // .chartgate/state.db
)

// projectFlags are the flags that say where a project's workflow and
// store are.
type projectFlags struct {
	workflow, store, format, subflows *string
	durable                           *bool
}

func addProjectFlags(fs *flag.FlagSet) projectFlags {
	return projectFlags{
		workflow: fs.String("workflow", defaultWorkflowFile, "the workflow file (XState or Statewright JSON)"),
		store:    fs.String("store", defaultStore, "where workflows are kept: a SQLite file, redis://HOST:PORT[/DB], postgres://USER@HOST/DB, or memory"),
		format:   fs.String("format", "auto", "the workflow's format: auto, xstate or statewright"),
		subflows: fs.String("subflows", "", "the directory of the Statewright workflows invoke names (default: the workflow file's)"),
		durable:  fs.Bool("durable", false, "with a SQLite store: sync every write to disk (survives a power loss; slower)"),
	}
}

const projectFlagsUsage = `  --workflow FILE  the workflow file, XState or Statewright JSON (default .chartgate/workflow.json)
  --store STORE    a SQLite file (default .chartgate/state.db), redis://HOST:PORT[/DB],
                   postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=...] (or postgresql://), or memory
  --format FORMAT  the workflow's format: auto (default), xstate or statewright
  --subflows DIR   the directory of the Statewright workflows invoke names (default: the workflow file's)
  --durable        with a SQLite store: sync every write to disk, so that a power loss loses
                   nothing (by default a write survives the process, not the machine, crashing)
`

// project is an open workflow and store.
type project struct {
	workflow *workflow.Workflow
	// version is the workflow's version: the start of the SHA-256 of its
	// file, in hex.
	version string
	store   mcpbind.Store
	close   func() error
}

// openProject loads the workflow and opens the store the flags name.
func openProject(f projectFlags) (*project, error) {
	// A person's commands read a workflow a compat gateway paused.
	return openProjectOpts(f, &workflow.Options{Pausable: true})
}

// openProjectOpts is openProject with more options for loading the
// workflow.
func openProjectOpts(f projectFlags, opts *workflow.Options) (*project, error) {
	data, err := os.ReadFile(*f.workflow)
	if err != nil {
		return nil, fmt.Errorf("reading the workflow: %w", err)
	}
	opts.Format = workflow.Format(*f.format)
	opts.Resolve = workflow.DirResolver(subflowDir(f))
	w, err := workflow.Load(data, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", *f.workflow, err)
	}
	if err := hook.CheckFormat(*f.workflow, w.Format); err != nil {
		return nil, err
	}
	store, closeStore, err := openStore(*f.store, f.durable != nil && *f.durable)
	if err != nil {
		return nil, err
	}
	return &project{workflow: w, version: workflowVersion(data), store: store, close: closeStore}, nil
}

// subflowDir is the directory of the subflows invoke names: --subflows,
// or the workflow file's.
func subflowDir(f projectFlags) string {
	if *f.subflows != "" {
		return *f.subflows
	}
	return filepath.Dir(*f.workflow)
}

// pgOpenTimeout bounds connecting to a Postgres store and checking its
// schema.
const pgOpenTimeout = 30 * time.Second

// isURLStore reports whether a --store value names a server (a URL), not
// a SQLite file.
func isURLStore(spec string) bool {
	for _, scheme := range []string{"redis://", "rediss://", "postgres://", "postgresql://"} {
		if strings.HasPrefix(spec, scheme) {
			return true
		}
	}
	return false
}

// openStore opens a store by its flag value. A SQLite store syncs every
// write to disk only if durable (WAL's synchronous=NORMAL otherwise: a
// write survives the process crashing, not the machine). A Postgres store
// keeps its tables in the schema "chartgate" of the database.
func openStore(spec string, durable bool) (mcpbind.Store, func() error, error) {
	switch {
	case spec == "memory":
		return mcpbind.NewMemoryStore(nil), func() error { return nil }, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		ctx, cancel := context.WithTimeout(context.Background(), pgOpenTimeout)
		defer cancel()
		s, err := pgstore.Open(ctx, spec, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %s: %w", redactURL(spec), err)
		}
		return s, s.Close, nil
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		opt, err := redis.ParseURL(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("--store %s: %w", redactURL(spec), err)
		}
		client := redis.NewClient(opt)
		return redisstore.New(client, nil), client.Close, nil
	case spec == "":
		return nil, nil, errors.New("--store: empty")
	}
	s, err := sqlitestore.Open(spec, &sqlitestore.Options{RelaxedSync: !durable})
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// redactURL hides a URL's password, for messages.
func redactURL(s string) string {
	return regexp.MustCompile(`//([^:/@]*):[^@/]*@`).ReplaceAllString(s, "//$1:***@")
}

// gate returns a gate of the project's workflow on its store, with the
// options every command that shares workflows with `chartgate serve` must
// agree on (agreedGateOptions: the store keys, the run history kept).
func (p *project) gate() (*mcpbind.Gate, error) {
	return mcpbind.New(p.workflow.Machine.Engine(), agreedGateOptions(p, nil, false, defaultLeaseTTL))
}

// refOf reads a WORKFLOW argument: a workflow id (32 hex digits, as
// workflow_start returns), or the name of a session's workflow (an agent
// session id). "id:" or "name:" before it says which.
func refOf(s string) mcpbind.Ref {
	if id, ok := strings.CutPrefix(s, "id:"); ok {
		return mcpbind.Ref{ID: id}
	}
	if name, ok := strings.CutPrefix(s, "name:"); ok {
		return mcpbind.Ref{Name: name}
	}
	if len(s) == 32 && strings.Trim(s, "0123456789abcdef") == "" {
		return mcpbind.Ref{ID: s}
	}
	return mcpbind.Ref{Name: s}
}

// refText writes a Ref for people.
func refText(r mcpbind.Ref, key string) string {
	switch {
	case r.ID != "":
		return r.ID
	case r.Name != "":
		return "name:" + r.Name
	}
	return "key:" + key
}

// workflowVersion is the version of a workflow file: the first 12 hex
// digits of its SHA-256.
func workflowVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

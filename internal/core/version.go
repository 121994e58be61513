// This file defines the check of a record's workflow version: a record
// saved by another version of the workflow (Options.WorkflowVersion) is
// migrated when its active states are states of this one, by state id,
// and refused otherwise, with the states that are missing and what a
// person does about it.

package core

import (
	"fmt"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/tidwall/gjson"
)

// checkVersion decides whether the record rec under key, whose state the
// engine restored with restoreErr, may be used by this gate. A record of
// this version (or of a gate without a version, or unstamped) keeps
// restoreErr; a record of another version whose active states all exist
// here and which restored is migrated (its next save stamps it with this
// version); otherwise the error is a [*VersionError].
func (g *Core) checkVersion(key string, rec Record, restoreErr error) error {
	if rec.WorkflowVersion == "" || g.wversion == "" || rec.WorkflowVersion == g.wversion {
		if restoreErr != nil {
			return fmt.Errorf("mcpbind: restoring the workflow state: %w", restoreErr)
		}
		return nil
	}
	var missing []string
	for _, id := range gjson.GetBytes(rec.Snap, "nodes").Array() {
		if _, ok := g.byID[id.String()]; !ok {
			missing = append(missing, id.String())
		}
	}
	if len(missing) == 0 && restoreErr == nil {
		g.Log.Info("mcpbind: workflow migrated from another version of the workflow", "key", Fingerprint(key), "from", rec.WorkflowVersion, "to", g.wversion)
		return nil
	}
	return &gate.VersionError{Key: key, Stored: rec.WorkflowVersion, Current: g.wversion, Missing: missing, Reason: restoreErr, Workflow: g.refName(key)}
}

// refName names the workflow under key as the chartgate commands take it:
// its id, name:NAME, or key:KEY for a session without a name.
func (g *Core) refName(key string) string {
	rest := strings.TrimPrefix(key, g.prefix)
	if id, ok := strings.CutPrefix(rest, "wf:"); ok {
		return id
	}
	if name, ok := strings.CutPrefix(rest, "session:"); ok {
		return "name:" + name
	}
	return "key:" + key
}

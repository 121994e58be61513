// This file defines the check of a record's workflow version: a record
// saved by another version of the workflow (Options.WorkflowVersion) is
// migrated when its active states are states of this one, by state id,
// and refused otherwise, with the states that are missing and what a
// person does about it.

package mcpbind

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// VersionError is the error of a workflow whose record was saved by
// another version of the workflow definition, and which this version
// cannot take over: states that were active then are no longer states of
// the workflow (Missing), or the active configuration is no longer legal
// (Reason). The gate refuses the workflow's calls with it until a person
// resets the workflow or brings back the version that saved it.
type VersionError struct {
	Key      string   // the workflow's store key
	Stored   string   // the version that saved the record
	Current  string   // this gate's version
	Missing  []string // active state ids that this version has not
	Reason   error    // why the state could not be restored otherwise
	Workflow string   // the workflow for a command line: an id, or name:NAME
}

func (e *VersionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpbind: workflow %s was saved by workflow version %s", e.Workflow, e.Stored)
	if len(e.Missing) > 0 {
		quoted := make([]string, len(e.Missing))
		for i, id := range e.Missing {
			quoted[i] = strconv.Quote(id)
		}
		fmt.Fprintf(&b, ", and its active states %s are not states of this version (%s)", strings.Join(quoted, ", "), e.Current)
	} else {
		fmt.Fprintf(&b, ", and this version (%s) cannot take its state over: %v", e.Current, e.Reason)
	}
	fmt.Fprintf(&b, "; a person runs chartgate reset %s to start it again from the initial state, or serves version %s again to finish it", e.Workflow, e.Stored)
	return b.String()
}

// Unwrap returns the error of restoring the state.
func (e *VersionError) Unwrap() error { return e.Reason }

// checkVersion decides whether the record rec under key, whose state the
// engine restored with restoreErr, may be used by this gate. A record of
// this version (or of a gate without a version, or unstamped) keeps
// restoreErr; a record of another version whose active states all exist
// here and which restored is migrated (its next save stamps it with this
// version); otherwise the error is a [*VersionError].
func (g *Gate) checkVersion(key string, rec record, restoreErr error) error {
	if rec.wversion == "" || g.wversion == "" || rec.wversion == g.wversion {
		if restoreErr != nil {
			return fmt.Errorf("mcpbind: restoring the workflow state: %w", restoreErr)
		}
		return nil
	}
	var missing []string
	for _, id := range gjson.GetBytes(rec.snap, "nodes").Array() {
		if _, ok := g.byID[id.String()]; !ok {
			missing = append(missing, id.String())
		}
	}
	if len(missing) == 0 && restoreErr == nil {
		g.log.Info("mcpbind: workflow migrated from another version of the workflow", "key", fingerprint(key), "from", rec.wversion, "to", g.wversion)
		return nil
	}
	return &VersionError{Key: key, Stored: rec.wversion, Current: g.wversion, Missing: missing, Reason: restoreErr, Workflow: g.refName(key)}
}

// refName names the workflow under key as the chartgate commands take it:
// its id, name:NAME, or key:KEY for a session without a name.
func (g *Gate) refName(key string) string {
	rest := strings.TrimPrefix(key, g.prefix)
	if id, ok := strings.CutPrefix(rest, "wf:"); ok {
		return id
	}
	if name, ok := strings.CutPrefix(rest, "session:"); ok {
		return "name:" + name
	}
	return "key:" + key
}

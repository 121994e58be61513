// This file reads and validates the "mcp" object of the state nodes' meta
// in the machine JSON (the state-centric binding), and defines the tool-name
// globs it may use.

package core

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/internal/toolname"
	"github.com/chartgate/chartgate/statechart"
)

// ReservedEvent reports whether an event type is reserved to the gate.
func ReservedEvent(ev string) bool { return strings.HasPrefix(ev, "chartgate.") }

// NameRef is a tool name or pattern the machine gives, and where.
type NameRef struct {
	Path    string
	Name    string
	Pattern bool // a meta.mcp.tools or ungated entry: may hold "*"
}

var mcpKeys = []string{"tools", "deny", "events", "invalidates", "outputGuards", "instructions", "maxCalls", "onMaxCalls", "approval", "ungated"}

// NodePaths returns the JSON path of every node of the machine: "" for the
// root, then states.a, states.a.states.b...
func NodePaths(nodes []statechart.Node, byID map[string]int) []jsonx.Path {
	paths := make([]jsonx.Path, len(nodes))
	for i, n := range nodes {
		if n.Parent == "" {
			continue
		}
		// Nodes come in document order, so the parent's path is known.
		paths[i] = paths[byID[n.Parent]].Key("states").Key(n.Key)
	}
	return paths
}

// ParseMCP reads meta.mcp of a node; it returns nil when there is none.
// The tool names and patterns it gives are appended to refs.
func ParseMCP(n statechart.Node, path jsonx.Path, events EventSet, errs *statechart.ErrorList, refs *[]NameRef) *gate.StateMCP {
	meta, ok := n.Meta.(map[string]any)
	if !ok {
		return nil
	}
	raw, ok := meta["mcp"]
	if !ok {
		return nil
	}
	path = path.Key("meta").Key("mcp")
	add := func(p jsonx.Path, format string, args ...any) {
		*errs = append(*errs, &statechart.Error{Path: string(p), Msg: fmt.Sprintf(format, args...)})
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		add(path, "must be an object with the keys %s, not %s", strings.Join(QuoteAll(mcpKeys), ", "), describe(raw))
		return nil
	}
	sm := &gate.StateMCP{StateID: n.ID}
	for _, k := range SortedKeys(obj) {
		v := obj[k]
		p := path.Key(k)
		switch k {
		case "tools", "deny", "ungated":
			if k == "ungated" && n.Parent != "" {
				add(p, "ungated applies to the whole machine: write it in the root state's meta.mcp")
				continue
			}
			arr, ok := v.([]any)
			if !ok {
				add(p, "must be an array of tool names or patterns, not %s", describe(v))
				continue
			}
			for i, e := range arr {
				s, ok := e.(string)
				if !ok {
					add(p.Index(i), "must be a tool name or pattern, not %s", describe(e))
					continue
				}
				if msg := CheckToolName(s, true); msg != "" {
					add(p.Index(i), "%s", msg)
					continue
				}
				switch k {
				case "tools":
					sm.Tools = append(sm.Tools, s)
				case "deny":
					sm.Deny = append(sm.Deny, s)
				default:
					sm.Ungated = append(sm.Ungated, s)
				}
				*refs = append(*refs, NameRef{Path: string(p.Index(i)), Name: s, Pattern: true})
			}
		case "events":
			m, ok := v.(map[string]any)
			if !ok {
				add(p, "must be an object mapping tool names to event types, not %s", describe(v))
				continue
			}
			for _, tool := range SortedKeys(m) {
				tp := p.Key(tool)
				if msg := CheckToolName(tool, false); msg != "" {
					add(tp, "%s", msg)
					continue
				}
				ev, ok := m[tool].(string)
				if !ok || ev == "" {
					add(tp, "must be a non-empty event type, not %s", describe(m[tool]))
					continue
				}
				if ReservedEvent(ev) {
					add(tp, "event %q is reserved: the chartgate.* events are sent by the gate, never by a tool", ev)
					continue
				}
				if msg := events.Check(ev); msg != "" {
					add(tp, "%s", msg)
					continue
				}
				if sm.Events == nil {
					sm.Events = map[string]string{}
				}
				sm.Events[tool] = ev
				*refs = append(*refs, NameRef{Path: string(tp), Name: tool})
			}
		case "outputGuards":
			arr, ok := v.([]any)
			if !ok {
				add(p, "must be an array of tool names, not %s", describe(v))
				continue
			}
			for i, e := range arr {
				s, ok := e.(string)
				if !ok {
					add(p.Index(i), "must be a tool name, not %s", describe(e))
					continue
				}
				if msg := CheckToolName(s, false); msg != "" {
					add(p.Index(i), "%s", msg)
					continue
				}
				sm.OutputGuards = append(sm.OutputGuards, s)
				*refs = append(*refs, NameRef{Path: string(p.Index(i)), Name: s})
			}
		case "invalidates":
			m, ok := v.(map[string]any)
			if !ok {
				add(p, "must be an object mapping tool names to arrays of invalidated patterns, not %s", describe(v))
				continue
			}
			for _, tool := range SortedKeys(m) {
				tp := p.Key(tool)
				if msg := CheckToolName(tool, false); msg != "" {
					add(tp, "%s", msg)
					continue
				}
				arr, ok := m[tool].([]any)
				if !ok {
					add(tp, `must be an array of patterns such as "cart.*", not %s`, describe(m[tool]))
					continue
				}
				var pats []string
				for i, e := range arr {
					s, ok := e.(string)
					if !ok {
						add(tp.Index(i), `must be a pattern such as "cart.*", not %s`, describe(e))
						continue
					}
					if msg := CheckInvalidates(s); msg != "" {
						add(tp.Index(i), "%s", msg)
						continue
					}
					if !slices.Contains(pats, s) {
						pats = append(pats, s)
					}
				}
				if len(pats) == 0 {
					continue
				}
				if sm.Invalidates == nil {
					sm.Invalidates = map[string][]string{}
				}
				sm.Invalidates[tool] = pats
				*refs = append(*refs, NameRef{Path: string(tp), Name: tool})
			}
		case "instructions":
			s, ok := v.(string)
			if !ok {
				add(p, "must be a string, not %s", describe(v))
				continue
			}
			sm.Instructions = s
		case "onMaxCalls":
			str, ok := v.(string)
			if !ok || (str != "refuse" && str != "warn") {
				add(p, `must be "refuse" or "warn", not %s`, describe(v))
				continue
			}
			if _, has := obj["maxCalls"]; !has {
				add(p, "needs maxCalls: it says what happens once maxCalls calls ran")
				continue
			}
			sm.OnMaxCalls = str
		case "approval":
			sm.Approval = parseApproval(v, p, events, add)
		case "maxCalls":
			f, ok := v.(float64)
			if !ok || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
				add(p, "must be a positive integer, not %s", describe(v))
				continue
			}
			sm.MaxCalls = int(f)
		default:
			msg := fmt.Sprintf("unknown key %q: the keys are %s", k, strings.Join(QuoteAll(mcpKeys), ", "))
			if s := DidYouMean(k, mcpKeys); s != "" {
				msg = fmt.Sprintf("unknown key %q (did you mean %q?)", k, s)
			}
			add(p, "%s", msg)
		}
	}
	return sm
}

// parseApproval reads meta.mcp.approval.
func parseApproval(v any, p jsonx.Path, events EventSet, add func(jsonx.Path, string, ...any)) *gate.Approval {
	m, ok := v.(map[string]any)
	if !ok {
		add(p, `must be an object {"event", "from", "to", "message"}, not %s`, describe(v))
		return nil
	}
	a := &gate.Approval{}
	fields := map[string]*string{"event": &a.Event, "from": &a.From, "to": &a.To, "message": &a.Message}
	for _, k := range SortedKeys(m) {
		dst, known := fields[k]
		if !known {
			add(p.Key(k), `unknown key %q: the keys are "event", "from", "to" and "message"`, k)
			continue
		}
		str, ok := m[k].(string)
		if !ok {
			add(p.Key(k), "must be a string, not %s", describe(m[k]))
			continue
		}
		*dst = str
	}
	for _, k := range []string{"event", "from", "to"} {
		if _, has := m[k]; !has {
			add(p, "needs %q", k)
		}
	}
	if msg := events.Check(gate.EventApprove); msg != "" {
		add(p, "the machine must handle %s (and %s) to leave this state: %s", gate.EventApprove, gate.EventReject, msg)
	}
	return a
}

// CheckInvalidates returns why s is not a valid invalidation pattern, or
// "". It is a tool pattern like those under tools (see package
// internal/toolname), which is also statesync's pattern language.
func CheckInvalidates(s string) string { return toolname.Check(s, true) }

// CheckToolName returns why s is not a valid tool name (or pattern, if
// globs are allowed), or "" (see package internal/toolname).
func CheckToolName(s string, glob bool) string { return toolname.Check(s, glob) }

// MatchGlob reports whether name matches pattern, where "*" matches any
// run of characters (none included) and every other character itself
// (see package internal/toolname).
func MatchGlob(pattern, name string) bool { return toolname.Match(pattern, name) }

// EventSet is the set of event descriptors the machine handles anywhere,
// to catch misspelt events in bindings.
type EventSet struct {
	Descriptors []string
	Any         bool // some state handles "*"
}

// MachineEvents returns the event descriptors the machine's states handle.
func MachineEvents(nodes []statechart.Node) EventSet {
	var es EventSet
	seen := map[string]bool{}
	for _, n := range nodes {
		for _, t := range n.Transitions {
			if t.Event == "" || seen[t.Event] {
				continue
			}
			seen[t.Event] = true
			if t.Event == "*" {
				es.Any = true
			}
			es.Descriptors = append(es.Descriptors, t.Event)
		}
	}
	return es
}

// Check returns why no state of the machine handles ev, or "".
func (es EventSet) Check(ev string) string {
	if es.Any {
		return ""
	}
	for _, d := range es.Descriptors {
		if MatchesEvent(ev, d) {
			return ""
		}
	}
	if s := DidYouMean(ev, es.Descriptors); s != "" {
		return fmt.Sprintf("no state handles event %q (did you mean %q?)", ev, s)
	}
	return fmt.Sprintf("no state handles event %q", ev)
}

// MatchesEvent reports whether an event type matches a transition's event
// descriptor, by the interpreter's rule ([statechart.MatchesEvent]).
func MatchesEvent(ev, descriptor string) bool { return statechart.MatchesEvent(ev, descriptor) }

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return string(jsonx.AppendFloat(nil, x))
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// SortedKeys returns the keys of m, sorted.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// QuoteAll returns ss, each quoted with strconv.Quote.
func QuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// DidYouMean returns the candidate closest to s, if it is close enough to
// be a likely typo.
func DidYouMean(s string, candidates []string) string {
	return hint.Closest(s, candidates)
}

// This file defines the decoration of tool descriptions with their cache
// directive.

package statesync

import (
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const directivePrefix = "[Cache-Control:"

// DecorateDescription returns desc with the directive cc appended as
// " [Cache-Control: cc]"; an empty desc gives just "[Cache-Control: cc]".
// A directive already at the end of desc (any "[Cache-Control: …]" tag,
// with any spacing before it) is replaced, never doubled, so decorating twice
// changes nothing and decorating with another directive swaps it. An empty
// cc returns desc unchanged.
func DecorateDescription(desc string, cc CacheControl) string {
	if cc == "" {
		return desc
	}
	base := stripDirective(desc)
	if base == "" {
		return directivePrefix + " " + string(cc) + "]"
	}
	return base + " " + directivePrefix + " " + string(cc) + "]"
}

// stripDirective removes a trailing directive and the white space before it,
// as the pattern /\s*\[Cache-Control:\s*\w[^\]]*\]$/ would.
func stripDirective(s string) string {
	if !strings.HasSuffix(s, "]") {
		return s
	}
	body := s[:len(s)-1]
	// The tag's text may not contain "]": it starts after the last one.
	from := strings.LastIndexByte(body, ']') + 1
	for {
		i := strings.Index(body[from:], directivePrefix)
		if i < 0 {
			return s
		}
		i += from
		rest := strings.TrimLeftFunc(body[i+len(directivePrefix):], unicode.IsSpace)
		if rest != "" && isWordByte(rest[0]) {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace)
		}
		from = i + 1
	}
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// DecorateTools returns tools with each description decorated with the
// tool's directive (see [DecorateDescription] and [Layer.Resolve]). The tools
// are never modified: a tool whose description changes is replaced by a
// copy, in a new slice; when nothing changes, tools itself is returned.
//
// The copy made for a tool value is remembered with its resolution and
// returned again while the tool value and its description are unchanged, so
// listing the same tools again costs no copying. Treat the returned tools as
// read-only, as the go-sdk's own are.
func (l *Layer) DecorateTools(tools []*mcp.Tool) []*mcp.Tool {
	out, _ := l.decorateTools(tools)
	return out
}

func (l *Layer) decorateTools(tools []*mcp.Tool) ([]*mcp.Tool, bool) {
	if l == nil {
		return tools, false
	}
	var out []*mcp.Tool
	for i, t := range tools {
		if t == nil {
			continue
		}
		e := l.resolve(t.Name)
		if e.res.CacheControl == "" {
			continue
		}
		var dt *mcp.Tool
		if m := e.memo.Load(); m != nil && m.src == t && m.base == t.Description {
			dt = m.out
		} else {
			d := DecorateDescription(t.Description, e.res.CacheControl)
			if d == t.Description {
				dt = t
			} else {
				c := *t
				c.Description = d
				dt = &c
			}
			e.memo.Store(&toolMemo{src: t, base: t.Description, out: dt})
		}
		if dt == t {
			continue
		}
		if out == nil {
			out = make([]*mcp.Tool, len(tools))
			copy(out, tools)
		}
		out[i] = dt
	}
	if out == nil {
		return tools, false
	}
	return out, true
}

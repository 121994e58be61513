package diagram

// This file lays the chart out and draws it as a self-contained SVG image.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SVGOptions are the options of [Chart.SVG]; the zero value draws no state
// lit.
type SVGOptions struct {
	// Active lists the ids of the states drawn lit (class "active"), such
	// as a snapshot's StateIDs.
	Active []string
}

// Sizes, in pixels.
const (
	fontSize  = 12.0
	charWidth = 7.3 // a monospace advance at 12px (0.6 em; DejaVu Sans Mono's is 0.602), rounded up
	stateH    = 34.0
	invokeH   = 14.0 // the second line of a state that invokes
	minStateW = 64.0
	textPad   = 14.0 // each side of a label
	headerH   = 26.0
	boxPad    = 18.0 // inside a box, left, right and below the header
	bottomPad = 30.0 // under the children: room for edges bending under them
	rowGap    = 26.0 // between the states of one column
	minColGap = 56.0
	initRoom  = 28.0 // the initial dot's column
	histR     = 14.0
	regionGap = 14.0
	loopRoom  = 30.0 // above a state with loops, plus a line per label beyond the first
	lineH     = 14.0
	bend      = 26.0 // how far an edge's control point is off the straight line
	skipBend  = 46.0 // more per column it skips, up to maxSkips
	maxSkips  = 3
	margin    = 12.0
)

type point struct{ x, y float64 }

type rect struct{ x, y, w, h float64 }

func (r rect) center() point { return point{r.x + r.w/2, r.y + r.h/2} }

// drawn is one arrow of the SVG: the edges between the same two ends, their
// labels one per line.
type drawn struct {
	src, tgt   int
	labels     []string
	fromAny    bool
	intoSelf   bool
	targetless bool // every edge of it is targetless
	loop       bool // drawn by drawLoops
}

type svgLayout struct {
	c       *Chart
	w, h    []float64
	rel     []point // top-left, relative to the parent's
	abs     []rect
	layer   []int     // a compound state's child: its column
	initDot []point   // a compound state with an initial child: its dot, relative
	loops   [][]int   // per node, the indexes of its loops in arrows
	arrows  []drawn   // edges other than loops and initial ones
	pairs   [][]pair  // per compound state, the edges between its children
	top     []float64 // per node, the room its loops need above it
}

// pair is an edge seen from the compound state that is the least common
// ancestor of its ends: between two of its children.
type pair struct {
	a, b  int
	width float64 // of the widest label line
}

func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * charWidth }

// SVG draws the chart as a self-contained SVG image (no script, no
// external reference), with the layout the package documentation
// describes.
func (c *Chart) SVG(opts *SVGOptions) string {
	if opts == nil {
		opts = &SVGOptions{}
	}
	l := c.layout()
	active := make([]bool, len(c.nodes))
	for _, id := range opts.Active {
		if i, ok := c.byID[id]; ok {
			active[i] = true
		}
	}
	width := l.w[0] + 2*margin
	height := l.h[0] + 2*margin + l.top[0]
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="chartgate-diagram" width="` + num(width) + `" height="` + num(height) +
		`" viewBox="0 0 ` + num(width) + ` ` + num(height) + `" font-family="ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="12">` + "\n")
	b.WriteString("<title>" + xmlText(c.id) + "</title>\n")
	b.WriteString(svgStyle)
	for i := range c.nodes {
		l.drawState(&b, i, active[i])
	}
	for i := range c.nodes {
		if init := c.initial[i]; init >= 0 && c.container(i) {
			d := point{l.abs[i].x + l.initDot[i].x, l.abs[i].y + l.initDot[i].y}
			end := l.clip(init, d)
			b.WriteString(`<circle class="initial" cx="` + num(d.x) + `" cy="` + num(d.y) + `" r="4.5"/>` + "\n")
			b.WriteString(`<path class="edge" d="M` + num(d.x+4.5) + `,` + num(d.y) + ` L` + num(end.x) + `,` + num(end.y) + `" marker-end="url(#cg-arrow)"/>` + "\n")
		}
	}
	// Labels keep off the states that are not boxes around others.
	labels := &labelWriter{}
	for i := range c.nodes {
		if !c.container(i) {
			labels.add(l.abs[i])
		}
	}
	for _, a := range l.arrows {
		if !a.loop {
			l.drawArrow(&b, labels, a)
		}
	}
	for i, ls := range l.loops {
		if len(ls) > 0 {
			l.drawLoops(&b, labels, i, ls)
		}
	}
	b.WriteString(labels.b.String())
	b.WriteString("</svg>\n")
	return b.String()
}

const svgStyle = `<defs><marker id="cg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs>
<style>
.state>rect,.state>circle{fill:#fff;stroke:#555;stroke-width:1.2}
.state.container>rect{fill:#f7f7f8}
.state.region>rect{stroke-dasharray:5 4;fill:#fcfcfd}
.state .name{font-weight:bold;fill:#222}
.state .invoke{fill:#666;font-size:11px}
.state.active>rect,.state.active>circle{fill:#fff1c2;stroke:#d97706;stroke-width:2.5}
.state.container.active>rect{fill:#fffaeb;stroke-width:1.8}
.state.root.active>rect{fill:#f7f7f8;stroke:#555;stroke-width:1.2}
.edge{fill:none;stroke:#555;stroke-width:1.2}
.edge.targetless{stroke-dasharray:4 3}
.initial{fill:#555}
.label rect{fill:#fff;opacity:.9}
.label text{fill:#1d4ed8}
</style>
`

// layout measures every state and places it.
func (c *Chart) layout() *svgLayout {
	n := len(c.nodes)
	l := &svgLayout{c: c, w: make([]float64, n), h: make([]float64, n), rel: make([]point, n), abs: make([]rect, n),
		layer: make([]int, n), initDot: make([]point, n), loops: make([][]int, n), pairs: make([][]pair, n), top: make([]float64, n)}
	l.collectArrows()
	for i := range l.loops {
		if k := len(l.loops[i]); k > 0 {
			lines := 0
			for _, a := range l.loops[i] {
				lines += len(l.arrows[a].labels)
			}
			l.top[i] = loopRoom + lineH*float64(lines-1)
		}
	}
	// Children come after their parent in document order: measure
	// bottom-up, place top-down.
	for i := n - 1; i >= 0; i-- {
		l.measure(i)
	}
	l.abs[0] = rect{margin, margin + l.top[0], l.w[0], l.h[0]}
	for i := 1; i < n; i++ {
		p := l.abs[c.parent[i]]
		l.abs[i] = rect{p.x + l.rel[i].x, p.y + l.rel[i].y, l.w[i], l.h[i]}
	}
	return l
}

// collectArrows merges the edges between the same ends into one arrow,
// sorts the loops out, and gives each compound state the edges between
// its children.
func (l *svgLayout) collectArrows() {
	c := l.c
	type key struct {
		src, tgt          int
		fromAny, intoSelf bool
		loop              bool
	}
	index := map[key]int{}
	for _, e := range c.edges {
		if e.initial {
			continue
		}
		loop := e.targetless || e.src == e.tgt
		k := key{e.src, e.tgt, e.fromAny, e.intoSelf, loop}
		if e.targetless {
			k.tgt = e.src
		}
		if loop {
			k.fromAny, k.intoSelf = false, false
		}
		a, ok := index[k]
		if !ok {
			a = len(l.arrows)
			index[k] = a
			l.arrows = append(l.arrows, drawn{src: k.src, tgt: k.tgt, fromAny: k.fromAny, intoSelf: k.intoSelf, targetless: true, loop: loop})
			if loop {
				l.loops[e.src] = append(l.loops[e.src], a)
			}
		}
		l.arrows[a].labels = append(l.arrows[a].labels, e.label)
		l.arrows[a].targetless = l.arrows[a].targetless && e.targetless
	}
	for _, a := range l.arrows {
		if a.loop {
			continue
		}
		lca, sa, ta := l.siblings(a.src, a.tgt)
		if lca < 0 {
			continue
		}
		w := 0.0
		for _, s := range a.labels {
			w = max(w, textWidth(s))
		}
		l.pairs[lca] = append(l.pairs[lca], pair{sa, ta, w})
	}
}

// siblings returns the least common ancestor of x and y and its children
// that x and y are in; lca is -1 when one is inside the other.
func (l *svgLayout) siblings(x, y int) (lca, xa, ya int) {
	c := l.c
	depth := func(i int) int {
		d := 0
		for ; c.parent[i] >= 0; i = c.parent[i] {
			d++
		}
		return d
	}
	dx, dy := depth(x), depth(y)
	for ; dx > dy; dx-- {
		x = c.parent[x]
	}
	for ; dy > dx; dy-- {
		y = c.parent[y]
	}
	if x == y {
		return -1, -1, -1
	}
	for c.parent[x] != c.parent[y] {
		x, y = c.parent[x], c.parent[y]
	}
	return c.parent[x], x, y
}

func (l *svgLayout) measure(i int) {
	c := l.c
	n := c.nodes[i]
	switch {
	case n.Type == "history":
		l.w[i], l.h[i] = 2*histR, 2*histR
	case !c.container(i) || n.Type == "compound":
		if !c.container(i) {
			l.w[i] = max(minStateW, textWidth(c.name(i))+2*textPad, textWidth(c.invokeText(i))+2*textPad)
			l.h[i] = stateH
			if c.invokeText(i) != "" {
				l.h[i] += invokeH
			}
			return
		}
		l.measureCompound(i)
	default:
		l.measureParallel(i)
	}
}

// header is the title of a box.
func (l *svgLayout) header(i int) string {
	if inv := l.c.invokeText(i); inv != "" {
		return l.c.name(i) + " / " + inv
	}
	return l.c.name(i)
}

func (l *svgLayout) measureCompound(i int) {
	c := l.c
	kids := c.children[i]
	pos := make(map[int]int, len(kids)) // child -> index in kids
	for k, ch := range kids {
		pos[ch] = k
		l.layer[ch] = -1
	}
	next := make([][]int, len(kids))
	for _, p := range l.pairs[i] {
		next[pos[p.a]] = append(next[pos[p.a]], pos[p.b])
	}
	// Breadth-first from the initial child, then from each child not yet
	// reached, in document order.
	var queue []int
	seed := func(k, layer int) {
		if l.layer[kids[k]] < 0 {
			l.layer[kids[k]] = layer
			queue = append(queue, k)
		}
	}
	if init := c.initial[i]; init >= 0 {
		seed(pos[init], 0)
	}
	for k := 0; ; {
		for len(queue) > 0 {
			q := queue[0]
			queue = queue[1:]
			for _, t := range next[q] {
				seed(t, l.layer[kids[q]]+1)
			}
		}
		for k < len(kids) && l.layer[kids[k]] >= 0 {
			k++
		}
		if k == len(kids) {
			break
		}
		seed(k, 0)
	}
	ncol := 0
	for _, ch := range kids {
		ncol = max(ncol, l.layer[ch]+1)
	}
	// The loops of the first state of each column go in a band of room
	// above every column, so that the columns stay aligned.
	colW := make([]float64, ncol)
	colH := make([]float64, ncol)
	band := 0.0
	for _, ch := range kids {
		L := l.layer[ch]
		colW[L] = max(colW[L], l.w[ch])
		if colH[L] > 0 {
			colH[L] += rowGap + l.top[ch]
		} else {
			band = max(band, l.top[ch])
		}
		colH[L] += l.h[ch]
	}
	// Edges that skip columns bend far: room above and below for them.
	skipRoom := 0.0
	gap := make([]float64, ncol)
	for L := range gap {
		gap[L] = minColGap
	}
	for _, p := range l.pairs[i] {
		la, lb := l.layer[p.a], l.layer[p.b]
		if la > lb {
			la, lb = lb, la
		}
		if lb == la+1 {
			gap[la] = max(gap[la], p.width+24)
		}
		if lb > la+1 {
			skipRoom = max(skipRoom, (bend+skipBend*float64(min(lb-la-1, maxSkips)))/2+lineH-stateH/2)
		}
	}
	x := boxPad
	if c.initial[i] >= 0 {
		x += initRoom
	}
	colX := make([]float64, ncol)
	inner := 0.0
	for L := range colX {
		colX[L] = x
		x += colW[L]
		if L < ncol-1 {
			x += gap[L]
		}
		inner = max(inner, colH[L])
	}
	y0 := headerH + boxPad + band + skipRoom
	used := make([]float64, ncol)
	for _, ch := range kids {
		L := l.layer[ch]
		if used[L] > 0 {
			used[L] += l.top[ch]
		}
		l.rel[ch] = point{colX[L] + (colW[L]-l.w[ch])/2, y0 + (inner-colH[L])/2 + used[L]}
		used[L] += l.h[ch] + rowGap
	}
	if init := c.initial[i]; init >= 0 {
		l.initDot[i] = point{boxPad + 6, l.rel[init].y + l.h[init]/2}
	}
	l.w[i] = max(x+boxPad, textWidth(l.header(i))+2*textPad)
	l.h[i] = y0 + inner + bottomPad + skipRoom
}

func (l *svgLayout) measureParallel(i int) {
	c := l.c
	regions, history := c.regions(i)
	x, inner := boxPad, 0.0
	for _, r := range regions {
		inner = max(inner, l.top[r]+l.h[r])
	}
	y0 := headerH + boxPad
	for k, r := range regions {
		if k > 0 {
			x += regionGap
		}
		l.h[r] = inner - l.top[r] // the regions are as tall as the tallest
		l.rel[r] = point{x, y0 + l.top[r]}
		x += l.w[r]
	}
	if len(history) > 0 {
		if len(regions) > 0 {
			x += regionGap
		}
		y := y0
		for _, h := range history {
			l.rel[h] = point{x, y}
			y += 2*histR + rowGap
		}
		x += 2 * histR
		inner = max(inner, y-rowGap-y0)
	}
	l.w[i] = max(x+boxPad, textWidth(l.header(i))+2*textPad)
	l.h[i] = y0 + inner + boxPad
}

// clip returns where the line from the center of node i towards p leaves
// its box (or circle).
func (l *svgLayout) clip(i int, p point) point {
	r := l.abs[i]
	c := r.center()
	dx, dy := p.x-c.x, p.y-c.y
	if dx == 0 && dy == 0 {
		return c
	}
	if l.c.nodes[i].Type == "history" {
		d := math.Hypot(dx, dy)
		return point{c.x + dx/d*histR, c.y + dy/d*histR}
	}
	t := math.Inf(1)
	if dx != 0 {
		t = r.w / 2 / math.Abs(dx)
	}
	if dy != 0 {
		t = min(t, r.h/2/math.Abs(dy))
	}
	t = min(t, 1)
	return point{c.x + dx*t, c.y + dy*t}
}

// titleEnd is where edges that leave a box itself for its inside start:
// just after its title.
func (l *svgLayout) titleEnd(i int) point {
	r := l.abs[i]
	return point{min(r.x+textWidth(l.header(i))+textPad+6, r.x+r.w-4), r.y + headerH/2}
}

func (l *svgLayout) drawState(b *strings.Builder, i int, active bool) {
	c := l.c
	n := c.nodes[i]
	r := l.abs[i]
	class := "state " + n.Type
	if c.container(i) {
		class += " container"
	}
	if i == 0 {
		class += " root"
	}
	if p := c.parent[i]; p >= 0 && c.nodes[p].Type == "parallel" && n.Type != "history" {
		class += " region"
	}
	if active {
		class += " active"
	}
	b.WriteString(`<g class="` + class + `" data-id="` + xmlText(n.ID) + `"><title>` + xmlText(n.ID) + "</title>")
	switch {
	case n.Type == "history":
		cp := r.center()
		b.WriteString(`<circle cx="` + num(cp.x) + `" cy="` + num(cp.y) + `" r="` + num(histR) + `"/>`)
		b.WriteString(`<text class="name" x="` + num(cp.x) + `" y="` + num(cp.y+4) + `" text-anchor="middle">` + c.historyMark(i) + `</text>`)
	case c.container(i):
		b.WriteString(rectTag(r, 8))
		b.WriteString(`<text class="name" x="` + num(r.x+textPad) + `" y="` + num(r.y+17) + `">` + xmlText(l.header(i)) + `</text>`)
	default:
		b.WriteString(rectTag(r, 6))
		if n.Type == "final" {
			b.WriteString(`<rect x="` + num(r.x+3) + `" y="` + num(r.y+3) + `" width="` + num(r.w-6) + `" height="` + num(r.h-6) + `" rx="4" fill="none" stroke="#555"/>`)
		}
		mid := r.x + r.w/2
		b.WriteString(`<text class="name" x="` + num(mid) + `" y="` + num(r.y+stateH/2+4) + `" text-anchor="middle">` + xmlText(c.name(i)) + `</text>`)
		if inv := c.invokeText(i); inv != "" {
			b.WriteString(`<text class="invoke" x="` + num(mid) + `" y="` + num(r.y+stateH/2+4+invokeH) + `" text-anchor="middle">` + xmlText(inv) + `</text>`)
		}
	}
	b.WriteString("</g>\n")
}

func (r rect) overlaps(o rect) bool {
	return r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h
}

func rectTag(r rect, rx float64) string {
	return `<rect x="` + num(r.x) + `" y="` + num(r.y) + `" width="` + num(r.w) + `" height="` + num(r.h) + `" rx="` + num(rx) + `"/>`
}

func (l *svgLayout) drawArrow(b *strings.Builder, labels *labelWriter, a drawn) {
	c := l.c
	var from, to point
	if a.fromAny {
		from = l.titleEnd(a.src)
	} else {
		from = l.abs[a.src].center()
	}
	switch {
	case a.intoSelf && c.initial[a.tgt] >= 0:
		to = point{l.abs[a.tgt].x + l.initDot[a.tgt].x, l.abs[a.tgt].y + l.initDot[a.tgt].y}
	case a.intoSelf:
		to = l.titleEnd(a.tgt)
	default:
		to = l.abs[a.tgt].center()
	}
	// The curve bends off the straight line between the borders (not the
	// centers), so that its label lands between the two boxes.
	if !a.fromAny {
		from = l.clip(a.src, to)
	}
	if !a.intoSelf {
		to = l.clip(a.tgt, from)
	}
	d := math.Hypot(to.x-from.x, to.y-from.y)
	if d == 0 {
		d = 1
	}
	off := bend
	if lca, sa, ta := l.siblings(a.src, a.tgt); lca >= 0 && c.nodes[lca].Type == "compound" {
		if skip := abs(l.layer[sa]-l.layer[ta]) - 1; skip > 0 {
			off += skipBend * float64(min(skip, maxSkips))
		}
	}
	ctl := point{(from.x+to.x)/2 + (to.y-from.y)/d*off, (from.y+to.y)/2 - (to.x-from.x)/d*off}
	if !a.fromAny {
		from = l.clip(a.src, ctl)
	}
	if !a.intoSelf {
		to = l.clip(a.tgt, ctl)
	}
	class := "edge"
	if a.targetless {
		class += " targetless"
	}
	b.WriteString(`<path class="` + class + `" d="M` + num(from.x) + `,` + num(from.y) + ` Q` + num(ctl.x) + `,` + num(ctl.y) + ` ` + num(to.x) + `,` + num(to.y) + `" marker-end="url(#cg-arrow)"/>` + "\n")
	mid := point{0.25*from.x + 0.5*ctl.x + 0.25*to.x, 0.25*from.y + 0.5*ctl.y + 0.25*to.y}
	labels.write(a.labels, mid.x, mid.y-lineH*float64(len(a.labels))/2, 1)
}

// drawLoops draws the loops of node i as one arrow on the right of its
// top, with every label above it.
func (l *svgLayout) drawLoops(b *strings.Builder, labels *labelWriter, i int, loops []int) {
	r := l.abs[i]
	var lines []string
	targetless := true
	for _, a := range loops {
		lines = append(lines, l.arrows[a].labels...)
		targetless = targetless && l.arrows[a].targetless
	}
	class := "edge"
	if targetless {
		class += " targetless"
	}
	x0, x1 := r.x+r.w-38, r.x+r.w-18
	if l.c.nodes[i].Type == "history" {
		c := r.center()
		x0, x1 = c.x-7, c.x+7
	}
	b.WriteString(`<path class="` + class + `" d="M` + num(x0) + `,` + num(r.y) + ` C` + num(x0-6) + `,` + num(r.y-24) + ` ` + num(x1+6) + `,` + num(r.y-24) + ` ` + num(x1) + `,` + num(r.y) + `" marker-end="url(#cg-arrow)"/>` + "\n")
	labels.write(lines, (x0+x1)/2, r.y-20-lineH*float64(len(lines)), -1)
}

// labelWriter writes the labels of the edges, after the edges, moving
// each one off the states and the labels written before it.
type labelWriter struct {
	b    strings.Builder
	done map[[2]int][]rect // the labels written, by the cells of a grid they cover
}

const cell = 64.0 // the grid's cell size: a label covers a few cells

// cells calls f with each cell r covers until it returns false.
func cells(r rect, f func(k [2]int) bool) {
	for cx := int(math.Floor(r.x / cell)); float64(cx)*cell < r.x+r.w; cx++ {
		for cy := int(math.Floor(r.y / cell)); float64(cy)*cell < r.y+r.h; cy++ {
			if !f([2]int{cx, cy}) {
				return
			}
		}
	}
}

// add marks r as taken.
func (lw *labelWriter) add(r rect) {
	if lw.done == nil {
		lw.done = map[[2]int][]rect{}
	}
	cells(r, func(k [2]int) bool {
		lw.done[k] = append(lw.done[k], r)
		return true
	})
}

func (lw *labelWriter) overlaps(r rect) bool {
	hit := false
	cells(r, func(k [2]int) bool {
		hit = slices.ContainsFunc(lw.done[k], r.overlaps)
		return !hit
	})
	return hit
}

// maxLabelMoves bounds how far a label is moved off others: the tries
// (each a line down, or up) of each label.
const maxLabelMoves = 8

// write writes lines of text centered on x, the first one's box starting
// at top, or moved by a line at a time in direction dir (1: down, -1: up)
// until it overlaps no label written before.
func (lw *labelWriter) write(lines []string, x, top float64, dir float64) {
	b := &lw.b
	w := 0.0
	for _, s := range lines {
		w = max(w, textWidth(s))
	}
	box := rect{x - w/2 - 3, top, w + 6, lineH*float64(len(lines)) + 2}
	for range maxLabelMoves {
		if !lw.overlaps(box) {
			break
		}
		box.y += dir * lineH
	}
	top = box.y
	lw.add(box)
	b.WriteString(`<g class="label"><rect x="` + num(x-w/2-3) + `" y="` + num(top) + `" width="` + num(w+6) + `" height="` + num(lineH*float64(len(lines))+2) + `" rx="3"/>`)
	for k, s := range lines {
		b.WriteString(`<text x="` + num(x) + `" y="` + num(top+11+lineH*float64(k)) + `" text-anchor="middle">` + xmlText(s) + `</text>`)
	}
	b.WriteString("</g>\n")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// num writes a coordinate with at most one decimal.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// xmlText escapes text and attribute values.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			if r < 0x20 && r != '\t' || r == utf8.RuneError || r == 0xFFFE || r == 0xFFFF {
				b.WriteRune('\uFFFD')
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

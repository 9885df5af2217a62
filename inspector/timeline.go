package inspector

import (
	"fmt"
	"net/url"

	"github.com/memvault/memvault/checkpointer"
)

// timeline is a page of checkpoints laid out for the SVG the thread page
// draws: one row per checkpoint, newest at the top; one lane (column) per
// branch, so a fork — a checkpoint with two children, as time travel makes
// — opens a new lane, and each subgraph namespace runs in lanes of its own.
type timeline struct {
	Width, Height int
	TextX         int
	Nodes         []node
	Edges         []edge
}

// node is one checkpoint drawn on the timeline.
type node struct {
	X, Y      int
	Link      string
	Label     string
	Class     string
	Title     string
	Selected  bool
	Fork      bool
	Namespace string
}

// edge is the line from a checkpoint to its parent.
type edge struct {
	Path  string
	Class string
}

const (
	rowHeight  = 24
	laneWidth  = 18
	laneMargin = 14
	maxLanes   = 16
	topMargin  = 16
)

// layout places tuples (newest first) in rows and lanes.
func (in *Inspector) layout(tuples []*checkpointer.Tuple, sel *checkpointer.Tuple, base url.Values) timeline {
	type key struct{ ns, id string }
	row := map[key]int{}
	for i, t := range tuples {
		row[key{t.Config.CheckpointNS, t.Config.CheckpointID}] = i
	}
	children := map[key]int{}
	for _, t := range tuples {
		if p := t.ParentConfig; p != nil && p.CheckpointID != "" {
			children[key{t.Config.CheckpointNS, p.CheckpointID}]++
		}
	}
	// Oldest first: the first child of a parent continues its lane; the
	// others (forks) and checkpoints whose parent is not on the page open
	// new lanes.
	lane := make([]int, len(tuples))
	taken := map[key]bool{}
	lanes := 0
	for i := len(tuples) - 1; i >= 0; i-- {
		t := tuples[i]
		l := -1
		if p := t.ParentConfig; p != nil && p.CheckpointID != "" {
			pk := key{t.Config.CheckpointNS, p.CheckpointID}
			if pr, ok := row[pk]; ok && !taken[pk] {
				l = lane[pr]
				taken[pk] = true
			}
		}
		if l < 0 {
			l = lanes
			lanes++
		}
		lane[i] = l
	}
	x := func(l int) int { return laneMargin + min(l, maxLanes-1)*laneWidth }
	y := func(i int) int { return topMargin + i*rowHeight }
	tl := timeline{TextX: x(min(lanes, maxLanes)) + 6, Height: topMargin + len(tuples)*rowHeight}
	tl.Width = tl.TextX + 430
	for i, t := range tuples {
		c := t.Config
		if p := t.ParentConfig; p != nil && p.CheckpointID != "" {
			if pr, ok := row[key{c.CheckpointNS, p.CheckpointID}]; ok {
				x1, y1, x2, y2 := x(lane[i]), y(i), x(lane[pr]), y(pr)
				tl.Edges = append(tl.Edges, edge{Path: fmt.Sprintf("M%d %d L%d %d L%d %d", x1, y1, x1, y2-rowHeight/2, x2, y2), Class: "link"})
			} else {
				tl.Edges = append(tl.Edges, edge{Path: fmt.Sprintf("M%d %d L%d %d", x(lane[i]), y(i), x(lane[i]), y(i)+rowHeight/2+2), Class: "link offpage"})
			}
		}
		n := node{X: x(lane[i]), Y: y(i), Link: in.cpHref(base, c.CheckpointNS, c.CheckpointID), Namespace: c.CheckpointNS}
		n.Fork = children[key{c.CheckpointNS, c.CheckpointID}] > 1
		n.Selected = sel != nil && sel.Config.CheckpointID == c.CheckpointID && sel.Config.CheckpointNS == c.CheckpointNS
		n.Class = "node"
		if n.Fork {
			n.Class += " fork"
		}
		if n.Selected {
			n.Class += " selected"
		}
		label := ""
		if s, ok := t.Metadata["step"]; ok {
			label = fmt.Sprintf("step %v", s)
		}
		if s, ok := t.Metadata["source"].(string); ok {
			label += " · " + s
		}
		if ts, ok := checkpointer.IDTime(c.CheckpointID); ok {
			label += " · " + when(ts)
		}
		if c.CheckpointNS != "" {
			label += " · ns " + c.CheckpointNS
		}
		if n.Fork {
			label += " · fork"
		}
		n.Label = printableText(label)
		n.Title = printableText(c.CheckpointID)
		tl.Nodes = append(tl.Nodes, n)
	}
	return tl
}

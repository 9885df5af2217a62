package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressEvery is how often a long step prints a progress line when
// stderr is not a terminal (a log file, a CI job, a pipe): often enough to
// show a run is alive, rarely enough not to flood a log.
const progressEvery = 5 * time.Second

// progress reports the advance of one long step (re-encrypting, importing,
// sweeping…) on stderr, never on stdout, which stays the command's result
// (parseable with --json). On a terminal it draws a bar; elsewhere it
// prints plain lines: one when the step starts, one at most every
// progressEvery while it runs, and one when it ends. A nil *progress (the
// --quiet flag) reports nothing; its methods are safe to call.
type progress struct {
	w     io.Writer
	what  string // the step, e.g. "re-encrypting memories"
	unit  string // what is counted, e.g. "rows"
	bar   *progressbar.ProgressBar
	start time.Time

	mu          sync.Mutex
	last        time.Time // the last line printed
	done, total int64
	note        string        // what else the step counted so far (SetNote)
	stop        chan struct{} // ends the ticker of a step without counts
	stopped     sync.WaitGroup
}

// newProgress starts reporting step what, counted in unit, on g's stderr.
// total is the count the step reaches, -1 while unknown (Set updates it).
func (g *globals) newProgress(w io.Writer, what, unit string, total int64) *progress {
	if g.quiet {
		return nil
	}
	p := &progress{w: w, what: what, unit: unit, start: time.Now(), total: total}
	if isTerminal(w) {
		opts := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what), progressbar.OptionClearOnFinish()}
		if unit != "" {
			opts = append(opts, progressbar.OptionShowCount())
		}
		p.bar = progressbar.NewOptions64(total, opts...)
		return p
	}
	p.line(false)
	return p
}

// newTicker is newProgress for a step that reports no counts (a sweep):
// a spinner on a terminal, elsewhere a line every progressEvery saying it
// still runs.
func (g *globals) newTicker(w io.Writer, what string) *progress {
	p := g.newProgress(w, what, "", -1)
	if p == nil || p.bar != nil {
		return p
	}
	p.stop = make(chan struct{})
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.line(false)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Set records that done of total units are done (total -1: unknown).
func (p *progress) Set(done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	if p.bar != nil {
		if total >= 0 && total != p.bar.GetMax64() {
			p.bar.ChangeMax64(total)
		}
		_ = p.bar.Set64(done)
		return
	}
	if time.Since(p.last) >= progressEvery {
		p.line(false)
	}
}

// SetNote records done units (total unknown) and a note of the step's
// other counts, printed after them — a sweep's scanned threads and what
// it removed so far.
func (p *progress) SetNote(done int64, note string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.note = note
	if p.bar != nil {
		p.bar.Describe(p.what + ": " + note)
	}
	p.mu.Unlock()
	p.Set(done, -1)
}

// Add records n more units done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	done, total := p.done+n, p.total
	p.mu.Unlock()
	p.Set(done, total)
}

// Finish ends the step: the bar is cleared, or a last line says what was
// done and how long it took.
func (p *progress) Finish() {
	if p == nil {
		return
	}
	p.stopTicker()
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(true)
}

// Fail ends a step that failed: the bar is cleared and no "done" line is
// printed, so the error the command prints next is not preceded by what
// reads as a success.
func (p *progress) Fail() {
	if p == nil {
		return
	}
	p.stopTicker()
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// stopTicker stops the goroutine that prints a line every few seconds,
// if one runs, and waits for it.
func (p *progress) stopTicker() {
	if p.stop != nil {
		close(p.stop)
		p.stopped.Wait()
		p.stop = nil
	}
}

// End ends the step: Finish when err is nil, else Fail.
func (p *progress) End(err error) {
	if err != nil {
		p.Fail()
		return
	}
	p.Finish()
}

// line prints one plain progress line; p.mu is held.
func (p *progress) line(final bool) {
	elapsed := time.Since(p.start).Round(100 * time.Millisecond)
	defer func() { p.last = time.Now() }()
	note := ""
	if p.note != "" {
		note = " (" + p.note + ")"
	}
	switch {
	case final && p.unit == "":
		fmt.Fprintf(p.w, "memvault: %s: done in %s\n", p.what, elapsed)
	case final:
		fmt.Fprintf(p.w, "memvault: %s: done, %d %s%s in %s\n", p.what, p.done, p.unit, note, elapsed)
	case p.last.IsZero():
		fmt.Fprintf(p.w, "memvault: %s…\n", p.what)
	case p.unit == "":
		fmt.Fprintf(p.w, "memvault: %s: still running after %s\n", p.what, elapsed)
	case p.total > 0:
		fmt.Fprintf(p.w, "memvault: %s: %d/%d %s (%d%%)\n", p.what, p.done, p.total, p.unit, p.done*100/p.total)
	default:
		fmt.Fprintf(p.w, "memvault: %s: %d %s%s\n", p.what, p.done, p.unit, note)
	}
}

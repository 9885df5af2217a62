package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// defaultMaxLine bounds a thread file's line unless --max-line says
// otherwise (threadfile.DefaultMaxLine says why).
const defaultMaxLine = threadfile.DefaultMaxLine

// maxMaxLine is the largest --max-line: the thread file reader's own bound.
const maxMaxLine = threadfile.MaxMaxLine

func newImportCmd(g *globals) *cobra.Command {
	maxLine := byteSize(defaultMaxLine)
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: "Import exported threads, re-serialized (and re-encrypted) under this database's settings",
		Long: `import reads a thread file (memvault threads export; - for stdin), checks it whole and
then writes it, one thread at a time. A file it refuses writes nothing and creates
nothing: a database that does not exist yet is created only once the file passed
its checks. A line longer than --max-line (default 16MiB) is refused naming it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, g, args[0], int64(maxLine))
		},
	}
	cmd.Flags().Var(&maxLine, "max-line", "refuse a line longer than this (bytes, or with KiB, MiB, GiB; at most 1GiB)")
	return cmd
}

func runImport(cmd *cobra.Command, g *globals, path string, maxLine int64) error {
	ctx := cmd.Context()
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	cfg, err := g.config()
	if err != nil {
		return err
	}
	lr := &lineCounter{r: r, max: maxLine}
	run := func(saver checkpointer.Saver) error {
		// The file is read and checked whole before anything is written;
		// progress starts with the first thread written and counts the
		// checkpoints written out of the lines read. A refused file
		// prints its error alone.
		var p *progress
		var written int64
		saver = progressSaver(saver, func() {
			if p == nil {
				p = g.newProgress(cmd.ErrOrStderr(), "importing checkpoints", "checkpoints", -1)
			}
		}, func(n int) {
			written += int64(n)
			p.Set(written, lr.lines)
		})
		st, err := threadfile.Import(ctx, lr, saver, threadfile.ImportOptions{IntVersions: cfg.Versions == checkpointer.VersionInt, MaxLine: int(maxLine)})
		if lr.err != nil {
			// The line reader stopped the file: the parser's error is
			// about the line it was given cut short.
			err = lr.err
		}
		if err != nil {
			p.Fail()
			return err
		}
		p.Finish()
		if g.json {
			return printJSON(cmd.OutOrStdout(), st)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "imported %d checkpoints (%d already present) and %d pending writes into %d threads\n", st.Imported, st.Skipped, st.Writes, len(st.Threads))
		if st.Note != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), "note:", st.Note)
		}
		return nil
	}
	opened := false
	err = withConfig(ctx, cfg, func(h *handle) error {
		opened = true
		return run(h.Saver)
	})
	if opened || !errors.Is(err, vault.ErrNotFound) {
		return err
	}
	if dataExists(ctx, cfg) {
		// Only a key table or an audit trail just turned on is missing:
		// import writes into the data there and creates them, as
		// `memvault migrate` would.
		return withNewConfig(ctx, cfg, func(h *handle) error { return run(h.Saver) })
	}
	// The target does not exist: it is created by the first write, which
	// comes only after the whole file passed its checks.
	t := &newTarget{ctx: ctx, cfg: cfg}
	err = run(t)
	return errors.Join(err, t.close())
}

// dataExists reports whether cfg's checkpoints and memories exist, apart
// from the key table and audit trail (which Open also requires of an
// existing database): it opens them alone, creating nothing. Any answer
// but "not found" counts as existing, so the error is reported by the
// ordinary open.
func dataExists(ctx context.Context, cfg config.Config) bool {
	cfg.MustExist = true
	cfg.Audit = false
	cfg.Subjects = keys.Subjects{}
	cfg.DangerousSkipKeyCheck = true
	h, err := vault.Open(ctx, cfg)
	if err == nil {
		h.Close()
	}
	return !errors.Is(err, vault.ErrNotFound)
}

// newTarget is the saver import writes to when the target database does
// not exist yet. Until the first write it is empty (no checkpoint is
// there: the file's parents must all be in the file) and nothing is
// created; the first write creates the database and its tables, as
// `memvault migrate` would, and every call after it goes to that saver.
type newTarget struct {
	ctx context.Context // for the open: NextVersion takes none
	cfg config.Config
	h   *vault.Handle
	err error
}

// saver opens (creating) the target once.
func (t *newTarget) saver() (checkpointer.Saver, error) {
	if t.h == nil && t.err == nil {
		cfg := t.cfg
		cfg.MustExist = false
		t.h, t.err = vault.Open(t.ctx, cfg)
		if t.err == nil {
			printWarnings(t.h, nil)
		}
	}
	if t.err != nil {
		return nil, t.err
	}
	return t.h.Saver, nil
}

func (t *newTarget) close() error {
	if t.h == nil {
		return nil
	}
	return t.h.Close()
}

// GetTuple implements checkpointer.Saver.
func (t *newTarget) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if t.h == nil {
		return nil, nil
	}
	return t.h.Saver.GetTuple(ctx, cfg)
}

// List implements checkpointer.Saver.
func (t *newTarget) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	if t.h == nil {
		return func(func(*checkpointer.Tuple, error) bool) {}
	}
	return t.h.Saver.List(ctx, cfg, opt)
}

// Put implements checkpointer.Saver.
func (t *newTarget) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) (checkpointer.Config, error) {
	s, err := t.saver()
	if err != nil {
		return checkpointer.Config{}, err
	}
	return s.Put(ctx, cfg, cp, md, nv)
}

// PutWrites implements checkpointer.Saver.
func (t *newTarget) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	s, err := t.saver()
	if err != nil {
		return err
	}
	return s.PutWrites(ctx, cfg, writes, taskID, taskPath)
}

// DeleteThread implements checkpointer.Saver.
func (t *newTarget) DeleteThread(ctx context.Context, threadID string) error {
	if t.h == nil {
		return nil
	}
	return t.h.Saver.DeleteThread(ctx, threadID)
}

// NextVersion implements checkpointer.Saver (import does not call it). It
// opens the target to answer as its saver does; when that fails it
// returns "" and the next write returns the error.
func (t *newTarget) NextVersion(current string) string {
	s, err := t.saver()
	if err != nil {
		return ""
	}
	return s.NextVersion(current)
}

// ImportThread implements checkpointer.ThreadImporter, so import writes
// each thread as one unit, as it does into an existing database.
func (t *newTarget) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	s, err := t.saver()
	if err != nil {
		return err
	}
	imp, ok := s.(checkpointer.ThreadImporter)
	if !ok {
		return fmt.Errorf("the %s backend cannot import a thread as one unit into a new database: run `memvault migrate` first, then import", t.h.Backend)
	}
	return imp.ImportThread(ctx, items)
}

// lineCounter counts the non-empty lines read through it (the lines of a
// thread file, which threadfile.Import checks whole before writing) and
// stops the file at a line longer than max: the reader of the file never
// holds more of a line than that, whatever the file. It seeks when the
// file does, so that Import reads a file twice instead of holding it.
type lineCounter struct {
	r       io.Reader
	max     int64
	lines   int64 // non-empty lines, for progress
	lineNo  int64 // the line being read, 1-based, as threadfile numbers them
	cur     int64 // bytes of the current line so far
	inLine  bool
	counted bool // the file was read to its end once: lines is its count
	err     error
}

// Seek implements io.Seeker when the file is one (a pipe is not: its Seek
// fails, and Import keeps what it read). Reading starts again at a line's
// start, as Import seeks, and the lines already counted are not counted
// again.
func (c *lineCounter) Seek(offset int64, whence int) (int64, error) {
	s, ok := c.r.(io.Seeker)
	if !ok {
		return 0, errors.New("not seekable")
	}
	pos, err := s.Seek(offset, whence)
	if err != nil || (offset == 0 && whence == io.SeekCurrent) {
		return pos, err
	}
	c.counted = true
	c.lineNo, c.cur, c.inLine = 0, 0, false
	return pos, nil
}

func (c *lineCounter) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(b)
	for i, ch := range b[:n] {
		if c.lineNo == 0 {
			c.lineNo = 1
		}
		if ch == '\n' {
			c.inLine = false
			c.lineNo++
			c.cur = 0
			continue
		}
		c.cur++
		if c.max > 0 && c.cur > c.max {
			c.err = fmt.Errorf("line %d: %w: longer than %s (%d bytes), the limit of a line (--max-line raises it)", c.lineNo, threadfile.ErrInvalidFile, byteSize(c.max), c.max)
			return i, c.err
		}
		if !c.inLine && ch != ' ' && ch != '\t' && ch != '\r' {
			c.inLine = true
			if !c.counted {
				c.lines++
			}
		}
	}
	return n, err
}

// progressSaver returns saver, calling start before each thread it imports
// as a unit is written and telling written how many checkpoints it wrote.
// The wrapper keeps the one optional interface threadfile.Import looks for
// (checkpointer.ThreadImporter), so a thread is still imported whole or not
// at all.
func progressSaver(saver checkpointer.Saver, start func(), written func(n int)) checkpointer.Saver {
	imp, ok := saver.(checkpointer.ThreadImporter)
	if !ok {
		return saver
	}
	return countingImporter{Saver: saver, imp: imp, start: start, written: written}
}

type countingImporter struct {
	checkpointer.Saver
	imp     checkpointer.ThreadImporter
	start   func()
	written func(n int)
}

func (c countingImporter) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	c.start()
	if err := c.imp.ImportThread(ctx, items); err != nil {
		return err
	}
	c.written(len(items))
	return nil
}

// byteSize is a size flag: a number of bytes, or one with a binary unit
// (KiB, MiB, GiB), between 1 byte and maxMaxLine.
type byteSize int64

var byteUnits = []struct {
	suffix string
	n      int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// String implements pflag.Value: the largest unit that divides the size.
func (s byteSize) String() string {
	for _, u := range byteUnits {
		if int64(s)%u.n == 0 && int64(s) >= u.n {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// Set implements pflag.Value.
func (s *byteSize) Set(v string) error {
	num, mult := v, int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			num, mult = n, u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > maxMaxLine/mult {
		return fmt.Errorf("want a size from 1 to 1GiB: bytes, or a whole number of KiB, MiB or GiB (16MiB)")
	}
	*s = byteSize(n * mult)
	return nil
}

// Type implements pflag.Value.
func (s *byteSize) Type() string { return "size" }

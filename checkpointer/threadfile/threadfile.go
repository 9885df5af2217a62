package threadfile

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
)

// Format is the value of every line's "format" field.
const Format = "memvault.thread.v1"

// Value is a channel value or pending write as the file carries it: the
// (type, data) pair serde.JSONPlus writes for it, data as JSON when the type
// is "json" and as base64 otherwise.
type Value struct {
	Type   string          `json:"type"`
	JSON   json.RawMessage `json:"json,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

// Write is one pending write of a checkpoint.
type Write struct {
	TaskID  string `json:"task_id"`
	Channel string `json:"channel"`
	Value   Value  `json:"value"`
}

// Line is one checkpoint of a thread file, with its pending writes.
type Line struct {
	Format          string                       `json:"format"`
	ThreadID        string                       `json:"thread_id"`
	CheckpointNS    string                       `json:"checkpoint_ns"`
	CheckpointID    string                       `json:"checkpoint_id"`
	ParentID        string                       `json:"parent_checkpoint_id,omitempty"`
	V               int                          `json:"v"`
	TS              string                       `json:"ts"`
	ChannelValues   map[string]Value             `json:"channel_values"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	UpdatedChannels []string                     `json:"updated_channels"`
	Metadata        Metadata                     `json:"metadata"`
	PendingWrites   []Write                      `json:"pending_writes"`

	// ParentMissing says that the parent is not in the file because the
	// source no longer held it (a retention sweep or KeepLast pruned it):
	// Import then keeps ParentID as it is without requiring the parent,
	// so a pruned thread moves as it is. Without it a parent must be
	// earlier in the file or in the target, which catches a file that lost
	// its first lines.
	ParentMissing bool `json:"parent_missing,omitempty"`

	lineNo int // line in the file, for errors; not exported
}

var codec serde.JSONPlus

// EncodeValue returns the file form of a value.
func EncodeValue(v any) (Value, error) {
	typ, data, err := codec.DumpsTyped(v)
	if err != nil {
		return Value{}, err
	}
	if typ == serde.TypeJSON && json.Valid(data) {
		return Value{Type: typ, JSON: data}, nil
	}
	return Value{Type: typ, Base64: base64.StdEncoding.EncodeToString(data)}, nil
}

// DecodeValue returns the value a file form carries.
func DecodeValue(v Value) (any, error) {
	data := []byte(v.JSON)
	if v.Base64 != "" {
		b, err := base64.StdEncoding.DecodeString(v.Base64)
		if err != nil {
			return nil, err
		}
		data = b
	}
	return codec.LoadsTyped(v.Type, data)
}

// Export writes every checkpoint of thread (all namespaces), oldest first,
// one Line per line, and returns how many it wrote. A thread without
// checkpoints is checkpointer.ErrNotFound.
func Export(ctx context.Context, w io.Writer, saver checkpointer.Saver, thread string) (int, error) {
	var tuples []*checkpointer.Tuple
	for t, err := range saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}) {
		if err != nil {
			return 0, err
		}
		tuples = append(tuples, t)
	}
	if len(tuples) == 0 {
		return 0, fmt.Errorf("%w: %s has no checkpoints", checkpointer.ErrNotFound, checkpointer.NameID("thread", thread))
	}
	// List is newest first per namespace; ids sort by time, so sorting by id
	// puts every parent before its children.
	slices.SortFunc(tuples, func(a, b *checkpointer.Tuple) int {
		if c := strings.Compare(a.Config.CheckpointID, b.Config.CheckpointID); c != 0 {
			return c
		}
		return strings.Compare(a.Config.CheckpointNS, b.Config.CheckpointNS)
	})
	// A parent the export does not hold (pruned in the source) is marked,
	// so that Import takes it as it is (Line.ParentMissing).
	type cpKey struct{ ns, id string }
	held := make(map[cpKey]bool, len(tuples))
	for _, t := range tuples {
		held[cpKey{t.Config.CheckpointNS, t.Config.CheckpointID}] = true
	}
	enc := json.NewEncoder(w)
	for _, t := range tuples {
		line := Line{
			Format: Format, ThreadID: t.Config.ThreadID, CheckpointNS: t.Config.CheckpointNS,
			CheckpointID: t.Config.CheckpointID, V: t.Checkpoint.V,
			TS:              t.Checkpoint.TS.UTC().Format(checkpointer.TimeLayout),
			ChannelValues:   map[string]Value{},
			ChannelVersions: t.Checkpoint.ChannelVersions, VersionsSeen: t.Checkpoint.VersionsSeen,
			UpdatedChannels: t.Checkpoint.UpdatedChannels, Metadata: Metadata(t.Metadata),
			PendingWrites: []Write{},
		}
		if t.ParentConfig != nil {
			line.ParentID = t.ParentConfig.CheckpointID
			line.ParentMissing = !held[cpKey{t.Config.CheckpointNS, line.ParentID}]
		}
		for ch, v := range t.Checkpoint.ChannelValues {
			ev, err := EncodeValue(v)
			if err != nil {
				return 0, fmt.Errorf("export %s, %s: %s: %w", checkpointer.NameID("thread", thread), checkpointer.NameID("checkpoint", t.Config.CheckpointID), checkpointer.NameID("channel", ch), err)
			}
			line.ChannelValues[ch] = ev
		}
		for _, pw := range t.PendingWrites {
			ev, err := EncodeValue(pw.Value)
			if err != nil {
				return 0, fmt.Errorf("export %s, %s: pending write to %s of %s: %w", checkpointer.NameID("thread", thread), checkpointer.NameID("checkpoint", t.Config.CheckpointID), checkpointer.NameID("channel", pw.Channel), checkpointer.NameID("task", pw.TaskID), err)
			}
			line.PendingWrites = append(line.PendingWrites, Write{TaskID: pw.TaskID, Channel: pw.Channel, Value: ev})
		}
		if err := enc.Encode(line); err != nil {
			return 0, err
		}
	}
	return len(tuples), nil
}

// ImportStats is what Import did.
type ImportStats struct {
	Imported int      `json:"imported"`
	Skipped  int      `json:"skipped"`
	Writes   int      `json:"writes"`
	Threads  []string `json:"threads"`
	// Note is set when the target cannot import a thread as one unit.
	Note string `json:"note,omitempty"`
}

// DefaultMaxLine is the longest line Read and Import accept unless told
// otherwise: one checkpoint with all its channel values and pending
// writes. Parsing a line holds it several times over in memory (a 50 MB
// line cost 247 MB of RSS), and a file that is not a thread file may be
// one endless line.
const DefaultMaxLine = 16 << 20

// MaxMaxLine is the largest ImportOptions.MaxLine.
const MaxMaxLine = 1 << 30

// ImportOptions adjust Import. The zero value imports versions as they are
// and accepts lines up to DefaultMaxLine.
type ImportOptions struct {
	// IntVersions renumbers channel versions that are not integers as
	// integers first, for a target shared with JS LangGraph, which needs
	// integer versions to continue a thread (see the package documentation).
	IntVersions bool
	// MaxLine is the longest line accepted, in bytes: a longer one fails
	// the import with ErrInvalidFile naming it, before anything is
	// written. 0 means DefaultMaxLine; at most MaxMaxLine.
	MaxLine int
}

// Import reads a thread file and stores it through saver, one thread at a
// time; see importThreads. An r that is an io.ReadSeeker (an *os.File) is
// read twice, from its current offset, and not held in memory; any other
// reader's lines are held as text until they are written.
func Import(ctx context.Context, r io.Reader, saver checkpointer.Saver, opts ImportOptions) (ImportStats, error) {
	maxLine := cmp.Or(opts.MaxLine, DefaultMaxLine)
	if maxLine < 0 || maxLine > MaxMaxLine {
		return ImportStats{Threads: []string{}}, fmt.Errorf("threadfile: ImportOptions.MaxLine %d is not between 1 and %d", opts.MaxLine, MaxMaxLine)
	}
	return importThreads(ctx, r, saver, opts.IntVersions, maxLine)
}

// importThreads reads export lines and stores them through saver, one
// thread at a time. The whole file is checked first (validator), one line
// at a time, keeping only ids and digests; then it is read again — seeked
// back when r is an io.ReadSeeker and saver a checkpointer.ThreadImporter,
// else from a spool of the lines' text kept by the first reading — and
// each thread is written once its last line is read, so memory holds the
// threads whose lines are being read, not the file parsed (a 28.6 MB file
// of 2 000 threads: 121 MB of RSS before, 38 MB from a file, 90 MB from a
// pipe). A thread read again is written only if its lines are the ones
// checked (a sha256 digest of them): a file changed in between stops the
// import with ErrInvalidFile, the threads before it written whole. Each
// thread is written as one unit when the saver is a ThreadImporter (all of
// it or, on error, none of it). A checkpoint that already exists is not
// rewritten, but its pending writes are written again, which completes an
// import that stopped between a checkpoint and its writes and changes
// nothing otherwise; importing twice is a no-op. Integer channel versions
// (JS LangGraph's) stay integers. With toInt (a target shared with JS
// LangGraph, which needs integer channel versions to continue a thread),
// versions that are not integers are renumbered first (see intVersions).
func importThreads(ctx context.Context, r io.Reader, saver checkpointer.Saver, toInt bool, maxLine int) (ImportStats, error) {
	st := ImportStats{Threads: []string{}}
	importer, atomic := saver.(checkpointer.ThreadImporter)
	// A file that can be read again is, and nothing of it is held between
	// the check and the writes; any other input is spooled. Only a thread
	// importer gets the second reading: each thread is written once its
	// lines read again are the lines checked (digests), which a saver
	// writing line by line could not wait for.
	rs, reread := r.(io.ReadSeeker)
	var start int64
	if reread && atomic {
		var err error
		if start, err = rs.Seek(0, io.SeekCurrent); err != nil {
			reread = false // a pipe: spooled
		}
	} else {
		reread = false
	}
	// The whole file is checked before anything is written, so a bad line
	// never leaves the checkpoints before it behind.
	v := newValidator(ctx, saver)
	var versions *versionSets
	if toInt {
		versions = &versionSets{}
	}
	var sp spool
	threads := map[string]*threadPass{}
	n := 0 // non-blank lines
	err := scanLines(r, maxLine, func(lineNo int, raw []byte) error {
		l, err := parseLine(lineNo, raw)
		if err != nil {
			return err
		}
		if err := v.check(&l); err != nil {
			return err
		}
		versions.add(&l)
		tp := threads[l.ThreadID]
		if tp == nil {
			tp = &threadPass{}
			threads[l.ThreadID] = tp
			st.Threads = append(st.Threads, l.ThreadID)
		}
		tp.last = n
		n++
		if reread {
			tp.digest.add(raw)
		} else {
			sp.add(lineNo, raw)
		}
		return nil
	})
	if err != nil {
		return ImportStats{Threads: []string{}}, err
	}
	if n == 0 {
		// Export writes a line per checkpoint and refuses a thread without
		// one: an empty file is what a failed export leaves (`export typo
		// | import -`), and reporting "0 imported" would hide it.
		return st, fmt.Errorf("%w: the file holds no line (an export that failed?)", ErrInvalidFile)
	}
	v = nil // its maps are not needed any more
	renum := versions.renumbering()
	if !atomic {
		st.Note = "this backend cannot import a thread as one unit: a failure part-way leaves the checkpoints before it; import the same file again to complete it"
	}
	i := 0 // the line being written, counting non-blank lines
	write := func(lineNo int, raw []byte) error {
		if i >= n {
			return errChanged
		}
		l, err := parseLine(lineNo, raw)
		if err != nil {
			if reread {
				return fmt.Errorf("%w (%w)", errChanged, err)
			}
			return err // the spool holds what was checked: not reached
		}
		tp := threads[l.ThreadID]
		if tp == nil || tp.done || i > tp.last {
			return errChanged
		}
		if reread {
			tp.reread.add(raw)
		}
		renum.apply(&l)
		it, err := importItem(ctx, saver, &l)
		if err != nil {
			return err
		}
		if it.Checkpoint != nil {
			tp.imported++
		} else {
			tp.skipped++
		}
		for _, w := range it.Writes {
			tp.writes += len(w.Writes)
		}
		if atomic {
			tp.items = append(tp.items, it)
		} else if err := core.PutImportItem(ctx, saver, it); err != nil {
			return fmt.Errorf("line %d: %w", l.lineNo, err)
		}
		i++
		if tp.last != i-1 {
			return nil
		}
		tp.done = true
		if atomic {
			if reread && tp.reread != tp.digest {
				return errChanged
			}
			if err := importer.ImportThread(ctx, tp.items); err != nil {
				return fmt.Errorf("%s (nothing of it was written): %w", checkpointer.NameID("thread", l.ThreadID), err)
			}
		}
		tp.items = nil
		st.Imported += tp.imported
		st.Skipped += tp.skipped
		st.Writes += tp.writes
		return nil
	}
	if reread {
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return st, fmt.Errorf("threadfile: read the file again: %w", err)
		}
		err = scanLines(rs, maxLine, write)
	} else {
		for j := range sp.len() {
			lineNo, raw := sp.line(j)
			err = write(lineNo, raw)
			sp.drop(j) // parsed: its text is no longer needed
			if err != nil {
				break
			}
		}
	}
	if err == nil && i != n {
		err = errChanged
	}
	if errors.Is(err, errChanged) {
		err = fmt.Errorf("%w: %w after it was checked; the threads written before are complete, import the file again", ErrInvalidFile, err)
	}
	return st, err
}

// errChanged is the error of a file that changed between its check and
// its second reading.
var errChanged = errors.New("the file changed")

// threadPass is what an import keeps of one thread between the check of
// the file and the writes, and while it reads the thread's lines again.
type threadPass struct {
	last                      int // the index of its last non-blank line
	digest, reread            lineDigest
	done                      bool
	items                     []checkpointer.ImportCheckpoint
	imported, skipped, writes int
}

// lineDigest is a digest of a sequence of lines: a thread read twice is
// written only if it read the same both times.
type lineDigest [sha256.Size]byte

func (d *lineDigest) add(line []byte) {
	sum := sha256.Sum256(line)
	*d = sha256.Sum256(append(d[:], sum[:]...))
}

// spool holds the text of a file's lines between the check of the whole
// file and the writes: one copy of each line, in blocks, so that holding a
// file costs about its size (a parsed Line costs several times its text).
type spool struct {
	blocks    [][]byte // filled blocks, the last one still being filled
	blockLast []int    // the index of each block's last line
	lines     []spoolLine
}

type spoolLine struct {
	lineNo int
	block  int    // the block holding text, -1 when it has its own allocation
	text   []byte // within a block, or its own allocation when large
}

// spoolBlock is the size of a spool block; a line longer than a quarter of
// it gets an allocation of its own, so a block is never mostly unused.
const spoolBlock = 1 << 20

func (s *spool) len() int { return len(s.lines) }

func (s *spool) add(lineNo int, raw []byte) {
	if len(raw) > spoolBlock/4 {
		s.lines = append(s.lines, spoolLine{lineNo: lineNo, block: -1, text: slices.Clone(raw)})
		return
	}
	n := len(s.blocks)
	if n == 0 || cap(s.blocks[n-1])-len(s.blocks[n-1]) < len(raw) {
		s.blocks = append(s.blocks, make([]byte, 0, spoolBlock))
		s.blockLast = append(s.blockLast, 0)
		n++
	}
	b := s.blocks[n-1]
	text := b[len(b) : len(b)+len(raw) : len(b)+len(raw)]
	s.blocks[n-1] = append(b, raw...)
	s.blockLast[n-1] = len(s.lines)
	s.lines = append(s.lines, spoolLine{lineNo: lineNo, block: n - 1, text: text})
}

func (s *spool) line(i int) (int, []byte) { return s.lines[i].lineNo, s.lines[i].text }

// drop forgets line i's text, and its block once the block's last line is
// dropped (lines are dropped in order), so that the writes, which hold
// decoded threads, do not also hold the text already parsed.
func (s *spool) drop(i int) {
	l := &s.lines[i]
	if l.block >= 0 && s.blockLast[l.block] == i {
		s.blocks[l.block] = nil
	}
	l.text = nil
}

// scanLines calls line with every non-blank line of r and its number,
// refusing one longer than maxLine; the slice is only valid during the
// call.
func scanLines(r io.Reader, maxLine int, line func(lineNo int, raw []byte) error) error {
	sc := bufio.NewScanner(r)
	// The buffer starts small and grows with the longest line, up to the
	// bound (plus the newline the scanner holds with it).
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine+1)), maxLine+1)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		if len(sc.Bytes()) > maxLine {
			// The last line, without a newline, may fill the buffer
			// a byte past the bound.
			return fmt.Errorf("line %d: %w: longer than %d bytes, the limit of a line (ImportOptions.MaxLine)", lineNo, ErrInvalidFile, maxLine)
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := line(lineNo, sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d: %w: longer than %d bytes, the limit of a line (ImportOptions.MaxLine)", lineNo+1, ErrInvalidFile, maxLine)
	} else if err != nil {
		return err
	}
	return nil
}

// parseLine parses one line of a thread file, checking its format and
// that it names a thread and a checkpoint.
func parseLine(lineNo int, raw []byte) (Line, error) {
	var l Line
	if err := json.Unmarshal(raw, &l); err != nil {
		return Line{}, fmt.Errorf("line %d: %w", lineNo, err)
	}
	if l.Format != Format {
		return Line{}, fmt.Errorf("line %d: %s, want %q", lineNo, checkpointer.NameID("format", l.Format), Format)
	}
	if l.ThreadID == "" || l.CheckpointID == "" {
		return Line{}, fmt.Errorf("line %d: missing thread_id or checkpoint_id", lineNo)
	}
	l.lineNo = lineNo
	return l, nil
}

// importItem turns one export line into what is written for it: the
// checkpoint (nil when the target already has it) and its pending writes.
func importItem(ctx context.Context, saver checkpointer.Saver, l *Line) (checkpointer.ImportCheckpoint, error) {
	lineNo := l.lineNo
	it := checkpointer.ImportCheckpoint{ThreadID: l.ThreadID, CheckpointNS: l.CheckpointNS, ID: l.CheckpointID, ParentID: l.ParentID, Metadata: checkpointer.Metadata(l.Metadata)}
	cfg := checkpointer.Config{ThreadID: l.ThreadID, CheckpointNS: l.CheckpointNS, CheckpointID: l.CheckpointID}
	existing, err := saver.GetTuple(ctx, cfg)
	if err != nil {
		return it, fmt.Errorf("line %d: %w", lineNo, err)
	}
	if existing == nil {
		ts, err := time.Parse(time.RFC3339Nano, l.TS)
		if err != nil {
			return it, fmt.Errorf("line %d: %w: %s", lineNo, ErrInvalidFile, core.BadTS(l.TS, err))
		}
		cp := &checkpointer.Checkpoint{
			V: l.V, ID: l.CheckpointID, TS: ts, ChannelValues: map[string]any{},
			ChannelVersions: l.ChannelVersions, VersionsSeen: l.VersionsSeen, UpdatedChannels: l.UpdatedChannels,
		}
		for ch, ev := range l.ChannelValues {
			v, err := DecodeValue(ev)
			if err != nil {
				return it, fmt.Errorf("line %d: %s: %w", lineNo, checkpointer.NameID("channel", ch), err)
			}
			cp.ChannelValues[ch] = v
		}
		// Every channel is written under its own version; blob rows another
		// checkpoint already wrote for the same version are kept as they are.
		it.NewVersions = make(map[string]string, len(cp.ChannelVersions))
		for ch, v := range cp.ChannelVersions {
			if _, ok := cp.ChannelValues[ch]; ok {
				it.NewVersions[ch] = v
			}
		}
		it.Checkpoint = cp
	}
	// Writes are grouped by task in their stored order, so positions (and
	// with them idx) are preserved.
	var tasks []string
	byTask := map[string][]checkpointer.Write{}
	for _, w := range l.PendingWrites {
		v, err := DecodeValue(w.Value)
		if err != nil {
			return it, fmt.Errorf("line %d: write to %s of %s: %w", lineNo, checkpointer.NameID("channel", w.Channel), checkpointer.NameID("task", w.TaskID), err)
		}
		if _, ok := byTask[w.TaskID]; !ok {
			tasks = append(tasks, w.TaskID)
		}
		byTask[w.TaskID] = append(byTask[w.TaskID], checkpointer.Write{Channel: w.Channel, Value: v})
	}
	for _, task := range tasks {
		// Special channels keep their fixed negative idx whatever call they
		// come in; the others get their positions back only when written
		// together, in order, without the special ones.
		var regular []checkpointer.Write
		for _, w := range byTask[task] {
			if core.IsSpecialChannel(w.Channel) {
				it.Writes = append(it.Writes, checkpointer.ImportWrites{TaskID: task, Writes: []checkpointer.Write{w}})
				continue
			}
			regular = append(regular, w)
		}
		if len(regular) > 0 {
			it.Writes = append(it.Writes, checkpointer.ImportWrites{TaskID: task, Writes: regular})
		}
	}
	return it, nil
}

// Read parses every line of a thread file, checking each line's format and
// ids; Import validates more (versions, parents, values) before it writes.
// A line longer than DefaultMaxLine fails it with ErrInvalidFile.
func Read(r io.Reader) ([]Line, error) {
	return read(r, DefaultMaxLine)
}

// read is Read with a bound on a line's length.
func read(r io.Reader, maxLine int) ([]Line, error) {
	var lines []Line
	err := scanLines(r, maxLine, func(lineNo int, raw []byte) error {
		l, err := parseLine(lineNo, raw)
		if err != nil {
			return err
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return lines, nil
}

// intVersions renumbers channel versions as integers, per thread,
// namespace and channel: the versions in use are sorted by their integer
// part, then as text (Python's forks share an integer part and differ in
// the random fraction), and the i-th becomes i+1. Order along every branch
// is kept, forks stay distinct, and versions_seen follows the same map.
func intVersions(lines []Line) {
	var vs versionSets
	for i := range lines {
		vs.add(&lines[i])
	}
	m := vs.renumbering()
	for i := range lines {
		m.apply(&lines[i])
	}
}

// chanKey names a channel of a thread's namespace.
type chanKey struct{ thread, ns, channel string }

// versionSets gathers the versions in use of every channel (see
// intVersions), one line at a time; a nil *versionSets gathers nothing.
type versionSets struct {
	all map[chanKey]map[string]bool
}

func (s *versionSets) add(l *Line) {
	if s == nil {
		return
	}
	if s.all == nil {
		s.all = map[chanKey]map[string]bool{}
	}
	put := func(k chanKey, v string) {
		if s.all[k] == nil {
			s.all[k] = map[string]bool{}
		}
		s.all[k][v] = true
	}
	for ch, v := range l.ChannelVersions {
		put(chanKey{l.ThreadID, l.CheckpointNS, ch}, v)
	}
	for _, seen := range l.VersionsSeen {
		for ch, v := range seen {
			put(chanKey{l.ThreadID, l.CheckpointNS, ch}, v)
		}
	}
}

// renumbering is the new number of every version of the channels that hold
// one that is not an integer; nil when there is none.
type renumbering map[chanKey]map[string]string

func (s *versionSets) renumbering() renumbering {
	if s == nil {
		return nil
	}
	renum := renumbering{}
	for k, set := range s.all {
		vs := slices.Collect(maps.Keys(set))
		if !slices.ContainsFunc(vs, func(v string) bool { _, err := strconv.ParseInt(v, 10, 64); return err != nil }) {
			continue // already integers
		}
		slices.SortFunc(vs, func(a, b string) int {
			na, _ := core.VersionNumber(a)
			nb, _ := core.VersionNumber(b)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		m := make(map[string]string, len(vs))
		for i, v := range vs {
			m[v] = strconv.Itoa(i + 1)
		}
		renum[k] = m
	}
	return renum
}

// apply renumbers l's versions.
func (renum renumbering) apply(l *Line) {
	if len(renum) == 0 {
		return
	}
	for ch, v := range l.ChannelVersions {
		if m := renum[chanKey{l.ThreadID, l.CheckpointNS, ch}]; m != nil {
			l.ChannelVersions[ch] = m[v]
		}
	}
	for _, seen := range l.VersionsSeen {
		for ch, v := range seen {
			if m := renum[chanKey{l.ThreadID, l.CheckpointNS, ch}]; m != nil {
				seen[ch] = m[v]
			}
		}
	}
}

// validateIDs checks the identifiers of one line as Put and PutWrites
// would (checkpointer.ValidateID): thread id, namespace, channel and node
// names, task ids and write channels. The checkpoint and parent ids are
// checked as UUIDv6 by validate.
func validateIDs(l *Line) error {
	if err := checkpointer.ValidateStoredThreadID(l.ThreadID); err != nil {
		return err
	}
	if err := checkpointer.ValidateID("checkpoint_ns", l.CheckpointNS); err != nil {
		return err
	}
	for ch := range l.ChannelValues {
		if err := checkpointer.ValidateID("channel name", ch); err != nil {
			return err
		}
	}
	for ch := range l.ChannelVersions {
		if err := checkpointer.ValidateID("channel name", ch); err != nil {
			return err
		}
	}
	for node, seen := range l.VersionsSeen {
		if err := checkpointer.ValidateID("versions_seen node name", node); err != nil {
			return err
		}
		for ch := range seen {
			if err := checkpointer.ValidateID("versions_seen channel name", ch); err != nil {
				return err
			}
		}
	}
	for _, w := range l.PendingWrites {
		if err := checkpointer.ValidateID("pending write task_id", w.TaskID); err != nil {
			return err
		}
		if err := checkpointer.ValidateID("pending write channel", w.Channel); err != nil {
			return err
		}
	}
	return nil
}

// ErrInvalidFile marks a thread file Import refused before anything was
// written.
var ErrInvalidFile = errors.New("invalid thread file")

// validator checks every line before anything is written: ids must be
// checkpoint ids (UUIDv6, as checkpointer.NewID makes them), each on one
// line only, every version a version by the rule Put applies
// (checkpointer.ValidateVersion), and every parent either earlier in the
// file (same thread and namespace), already in the target, or marked
// missing by the export (Line.ParentMissing). Errors name the line.
type validator struct {
	ctx     context.Context
	saver   checkpointer.Saver
	earlier map[cpKey]int // line of each checkpoint
}

// cpKey names a checkpoint.
type cpKey struct{ thread, ns, id string }

func newValidator(ctx context.Context, saver checkpointer.Saver) *validator {
	return &validator{ctx: ctx, saver: saver, earlier: map[cpKey]int{}}
}

// check validates one line, in file order.
func (v *validator) check(l *Line) error {
	ctx, saver, earlier := v.ctx, v.saver, v.earlier
	bad := func(format string, args ...any) error {
		return fmt.Errorf("line %d: %w: %s", l.lineNo, ErrInvalidFile, fmt.Sprintf(format, args...))
	}
	// Identifiers by the rules Put and PutWrites apply (text, at most
	// checkpointer.MaxIDBytes), so that a file from any backend is
	// refused here, naming its line, rather than half-way through.
	if err := validateIDs(l); err != nil {
		return fmt.Errorf("line %d: %w: %w", l.lineNo, ErrInvalidFile, err)
	}
	if _, ok := checkpointer.IDTime(l.CheckpointID); !ok {
		return bad("%s is not a checkpoint id (UUIDv6)", checkpointer.NameID("checkpoint_id", l.CheckpointID))
	}
	// A second line for one checkpoint would be written over the first
	// (or skipped) and counted twice: which content is meant cannot be
	// told, so the file is refused.
	if first, dup := earlier[cpKey{l.ThreadID, l.CheckpointNS, l.CheckpointID}]; dup {
		return bad("%s of %s (%s) is already on line %d", checkpointer.NameID("checkpoint", l.CheckpointID), checkpointer.NameID("thread", l.ThreadID), checkpointer.NameID("checkpoint_ns", l.CheckpointNS), first)
	}
	for ch, v := range l.ChannelVersions {
		if err := checkpointer.ValidateVersion("channel version", v); err != nil {
			return fmt.Errorf("line %d: %w: channel_versions of %s: %w", l.lineNo, ErrInvalidFile, checkpointer.NameID("channel", ch), err)
		}
	}
	for node, seen := range l.VersionsSeen {
		for ch, v := range seen {
			if err := checkpointer.ValidateVersion("channel version", v); err != nil {
				return fmt.Errorf("line %d: %w: versions_seen of %s, %s: %w", l.lineNo, ErrInvalidFile, checkpointer.NameID("node", node), checkpointer.NameID("channel", ch), err)
			}
		}
	}
	// Values are decoded here too (and again when written), so a value
	// that does not decode is refused before the first write.
	for ch, ev := range l.ChannelValues {
		if _, err := DecodeValue(ev); err != nil {
			return bad("%s: %v", checkpointer.NameID("channel", ch), err)
		}
	}
	for _, w := range l.PendingWrites {
		if _, err := DecodeValue(w.Value); err != nil {
			return bad("write to %s of %s: %v", checkpointer.NameID("channel", w.Channel), checkpointer.NameID("task", w.TaskID), err)
		}
	}
	// Metadata by the rule Put applies on every backend, so that
	// metadata one backend cannot store (too deep for SQLite) stops
	// the file here, not after the threads before it were written.
	if _, err := core.EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata(l.Metadata)); err != nil {
		return fmt.Errorf("line %d: %w: metadata: %w", l.lineNo, ErrInvalidFile, err)
	}
	if _, err := time.Parse(time.RFC3339Nano, l.TS); err != nil {
		return bad("%s", core.BadTS(l.TS, err))
	}
	if l.ParentID != "" {
		if _, ok := checkpointer.IDTime(l.ParentID); !ok {
			return bad("%s is not a checkpoint id (UUIDv6)", checkpointer.NameID("parent_checkpoint_id", l.ParentID))
		}
		if _, ok := earlier[cpKey{l.ThreadID, l.CheckpointNS, l.ParentID}]; !ok && !l.ParentMissing {
			t, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: l.ThreadID, CheckpointNS: l.CheckpointNS, CheckpointID: l.ParentID})
			if err != nil {
				return fmt.Errorf("line %d: %w", l.lineNo, err)
			}
			if t == nil {
				return bad("parent %s is neither earlier in the file nor in the target (nor marked parent_missing, as an export of a pruned thread marks it)", checkpointer.NameID("checkpoint", l.ParentID))
			}
		}
	}
	earlier[cpKey{l.ThreadID, l.CheckpointNS, l.CheckpointID}] = l.lineNo
	return nil
}

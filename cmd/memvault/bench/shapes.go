package bench

import (
	"context"
	binenc "encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/serde"
)

// shapeParams select the checkpointer bench's workloads at real shapes and
// sizes. The zero value selects none of them (the classic bench runs).
type shapeParams struct {
	// workload "messages" runs the growing-messages workload.
	workload string
	// scale, when positive, seeds that many checkpoints over threads
	// threads and measures next to scaleBase checkpoints of the same
	// thread shape.
	scale, threads, scaleBase int
	// backend is "postgres" (the default) or "sqlite".
	backend string
}

// Bounds of the shape options: the bench allocates per thread, never per
// checkpoint of the whole data set, but a thread is seeded in memory.
const (
	maxPerThread  = 10000
	messagesSteps = 200 // steps of a growing-messages thread
	messageBytes  = 500 // about, per message as JSON
)

// active reports whether the shape workloads run instead of the classic
// bench (which runs on PostgreSQL and SQLite; check refuses other
// backends).
func (sf shapeParams) active() bool {
	return sf.workload != "" || sf.scale > 0 || (sf.backend != "" && sf.backend != "postgres" && sf.backend != "sqlite")
}

// check refuses shapes the workloads cannot run.
func (sf shapeParams) check() error {
	switch sf.backend {
	case "", "postgres", "sqlite":
	default:
		return optionf("--backend: %q (want postgres or sqlite)", sf.backend)
	}
	if sf.workload != "" && sf.workload != "messages" {
		return optionf("--workload: %q (want messages)", sf.workload)
	}
	if sf.workload == "" && sf.scale <= 0 {
		return optionf("--backend %s runs --workload messages and/or --scale N", sf.backend)
	}
	if sf.scale > 0 {
		if sf.threads <= 0 || sf.scale < sf.threads || sf.scale/sf.threads > maxPerThread {
			return optionf("--scale %d over --threads %d: want 1 to %d checkpoints per thread", sf.scale, sf.threads, maxPerThread)
		}
		if sf.scaleBase < sf.scale/sf.threads || sf.scaleBase > sf.scale {
			return optionf("--scale-base %d: want between one thread (%d) and --scale", sf.scaleBase, sf.scale/sf.threads)
		}
	}
	return nil
}

// rawWriter is what a baseline client writes with.
type rawWriter interface {
	putWithParent(ctx context.Context, thread, parent string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) error
	putWrites(ctx context.Context, cfg checkpointer.Config, ws []checkpointer.Write, task string) error
}

// rawCP is a baseline client: equivalent SQL sent directly, values decoded
// with encoding/json.
type rawCP interface {
	rawWriter
	getTuple(ctx context.Context, thread, id string) error
	list(ctx context.Context, thread string, limit int) error
}

// cpEnv is one set of tables with the library's savers (by mode) and the
// raw baseline on them.
type cpEnv struct {
	// pool and schema are the PostgreSQL environment's (nil, "" on SQLite).
	pool   *pgxpool.Pool
	schema string
	// path is the SQLite environment's file ("" on PostgreSQL).
	path    string
	savers  map[string]checkpointer.Saver
	raw     rawCP
	rawMode string
	// seed writes a template thread's rows again for n threads (see
	// replicate) and refreshes the planner's statistics.
	seed func(ctx context.Context, tmpl *template, n int) error
	// stats refreshes the planner's statistics.
	stats func(ctx context.Context) error
	close func()
}

// shapeBackend opens environments on one backend.
type shapeBackend struct {
	name     string
	settings [][2]string
	open     func(ctx context.Context, label string, modes []string) (*cpEnv, error)
	close    func()
	// probe, when set, reads the server's CPU time and bytes received
	// around each slice (Redis on one server).
	probe serverProbe
	// trips: operations count their round trips to the server (Redis).
	trips bool
}

// benchShapes runs the workloads sf selects; Check has checked the
// options.
func benchShapes(ctx context.Context, out io.Writer, dsn string, asJSON bool, bf params, sf shapeParams, jsDir string) error {
	var be *shapeBackend
	var err error
	if sf.backend == "sqlite" {
		be, err = sqliteShapeBackend(ctx)
	} else {
		be, err = pgShapeBackend(ctx, dsn, bf.concurrency)
	}
	if err != nil {
		return err
	}
	defer be.close()
	p := &benchPrinter{out: out, json: asJSON}
	if !asJSON {
		fmt.Fprintf(out, "checkpointer bench on %s: %s per row, concurrency 1 and %d\n", be.name, bf.duration, bf.concurrency)
	}
	if err := p.settings(be.settings); err != nil {
		return err
	}
	if sf.workload == "messages" {
		var js messagesJS
		if jsDir != "" {
			js = func(ctx context.Context, env *cpEnv, f msgFixture) (*jsBench, error) {
				return startJSMessages(ctx, jsDir, be, env, f)
			}
		}
		if err := benchMessages(ctx, p, be, bf, js); err != nil {
			return err
		}
	}
	if sf.scale > 0 {
		if err := benchScale(ctx, p, be, bf, sf); err != nil {
			return err
		}
	}
	return nil
}

// benchID is a UUIDv6-shaped checkpoint id whose timestamp is base+n, so
// that ids sort by n; the id of step n-1 is known without asking anyone.
func benchID(base uint64, n int64, step int) string {
	ts := base + uint64(n)
	var u [16]byte
	binenc.BigEndian.PutUint64(u[0:8], ((ts>>12)&0xFFFFFFFFFFFF)<<16|0x6000|(ts&0x0FFF))
	binenc.BigEndian.PutUint16(u[8:10], 0x8000|uint16(step)&0x3FFF)
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// idBase is a UUIDv6 timestamp of now.
func idBase() uint64 { return uint64(time.Now().UnixNano()/100) + 0x01B21DD213814000 }

// msgFixture is the growing-messages thread: at step s the messages channel
// holds s+1 messages of ~500 bytes (LangGraph's add_messages appends and
// the whole list is the channel's new value); context and summary keep
// the version (and blob row) of step 0.
type msgFixture struct {
	msgs    []any
	context map[string]any
	summary string
}

func newMsgFixture() msgFixture {
	f := msgFixture{
		context: map[string]any{"user_id": "u-123", "plan": "premium"},
		summary: "A customer asks about an invoice.",
	}
	body := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 8)[:420]
	for i := range messagesSteps {
		role := "human"
		if i%2 == 1 {
			role = "ai"
		}
		f.msgs = append(f.msgs, map[string]any{
			"type": role, "id": fmt.Sprintf("run-%08d-%04d", 1042, i),
			"content": body, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		})
	}
	return f
}

func msgVersion(step int) string { return fmt.Sprintf("%032d.%016d", step+1, 0) }

// step returns the checkpoint of step s and its new versions.
func (f msgFixture) step(id string, s int) (*checkpointer.Checkpoint, map[string]string) {
	first := msgVersion(0)
	vers := map[string]string{"messages": msgVersion(s), "context": first, "summary": first}
	nv := map[string]string{"messages": vers["messages"]}
	if s == 0 {
		nv = vers
	}
	return &checkpointer.Checkpoint{
		V: 4, ID: id, TS: time.Now().UTC(),
		ChannelValues:   map[string]any{"messages": f.msgs[:s+1], "context": f.context, "summary": f.summary},
		ChannelVersions: vers, VersionsSeen: map[string]map[string]string{"agent": vers},
		UpdatedChannels: []string{"messages"},
	}, nv
}

// putStep writes step s of thread in mode, its id made of n; the parent,
// step s-1, has its id made of prev.
func (e *cpEnv) putStep(ctx context.Context, mode string, f msgFixture, base uint64, thread string, prev, n int64, s int) error {
	cp, nv := f.step(benchID(base, n, s), s)
	parent := ""
	if s > 0 {
		parent = benchID(base, prev, s-1)
	}
	md := checkpointer.Metadata{"source": "loop", "step": s}
	if mode == e.rawMode {
		return e.raw.putWithParent(ctx, thread, parent, cp, md, nv)
	}
	_, err := e.savers[mode].Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, nv)
	return err
}

func (e *cpEnv) getLatest(ctx context.Context, mode, thread, id string) error {
	if mode == e.rawMode {
		return e.raw.getTuple(ctx, thread, id)
	}
	t, err := e.savers[mode].GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: id})
	if err == nil && t == nil {
		err = fmt.Errorf("no tuple in thread %s", thread)
	}
	return err
}

func (e *cpEnv) list(ctx context.Context, mode, thread string, limit int) error {
	if mode == e.rawMode {
		return e.raw.list(ctx, thread, limit)
	}
	n := 0
	for _, err := range e.savers[mode].List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{Limit: limit}) {
		if err != nil {
			return err
		}
		n++
	}
	if n != limit {
		return fmt.Errorf("list returned %d tuples, want %d", n, limit)
	}
	return nil
}

// benchMessages measures the growing-messages workload: put_messages walks
// threads of 200 steps (each put at the thread's next step, so the rows
// average over the growth: the messages blob is 1 to 200 messages, ~50 KB
// on average); get_messages_50 and get_messages_200 read the latest
// checkpoint of a thread grown to 50 and to 200 messages.
// messagesJS starts JS LangGraph's saver on env for the growing-messages
// workload, seeded with f's messages.
type messagesJS func(ctx context.Context, env *cpEnv, f msgFixture) (*jsBench, error)

func benchMessages(ctx context.Context, p *benchPrinter, be *shapeBackend, bf params, startJS messagesJS) error {
	modes := []string{"plaintext", "encrypted"}
	env, err := be.open(ctx, "msg", modes)
	if err != nil {
		return err
	}
	defer func() { env.close() }() // addAudited extends it
	// The audited column where vault.Open would keep a trail: MongoDB and
	// Redis have no audit table. The grouped column where the saver
	// commits concurrent writes together: the SQL backends.
	if env.pool != nil || env.path != "" {
		if err := addAudited(ctx, env); err != nil {
			return err
		}
		modes = append(modes, auditedMode)
		if err := addGrouped(ctx, env); err != nil {
			return err
		}
		modes = append(modes, groupedMode)
	}
	modes = append([]string{env.rawMode}, modes...)
	f := newMsgFixture()
	base := idBase()
	var external map[string]sliceRunner
	if startJS != nil {
		js, err := startJS(ctx, env, f)
		if err != nil {
			return err
		}
		defer js.Close()
		modes = append(modes, jsMode)
		external = map[string]sliceRunner{jsMode: js.run}
	}
	for _, mode := range modes {
		if mode == jsMode {
			continue
		}
		for _, depth := range []int{50, messagesSteps} {
			thread := fmt.Sprintf("mget%d-%s", depth, mode)
			for s := range depth {
				if err := env.putStep(ctx, mode, f, base, thread, int64(s)-1, int64(s), s); err != nil {
					return fmt.Errorf("seed %s: %w", thread, err)
				}
			}
		}
	}
	if err := env.stats(ctx); err != nil {
		return err
	}
	growing := map[string]*growingThreads{}
	for _, m := range modes {
		growing[m] = &growingThreads{}
	}
	ops := []namedOp{
		{"put_messages", func(mode string) benchOp {
			g := growing[mode]
			return func(ctx context.Context, _ int64) error {
				// The thread is this operation's alone until it is
				// put back: its steps are written one after the other,
				// each on the one before, as a graph's are.
				t := g.take()
				n := g.seq.Add(1) - 1
				thread := fmt.Sprintf("mput-%s-%d-%d", mode, t.k, t.gen)
				if err := env.putStep(ctx, mode, f, base, thread, t.last, n, t.step); err != nil {
					return err
				}
				t.last, t.step = n, t.step+1
				if t.step == messagesSteps {
					t.gen, t.step = t.gen+1, 0
				}
				g.put(t)
				return nil
			}
		}},
		{"get_messages_50", func(mode string) benchOp {
			return func(ctx context.Context, _ int64) error { return env.getLatest(ctx, mode, "mget50-"+mode, "") }
		}},
		{"get_messages_200", func(mode string) benchOp {
			return func(ctx context.Context, _ int64) error {
				return env.getLatest(ctx, mode, fmt.Sprintf("mget%d-%s", messagesSteps, mode), "")
			}
		}},
	}
	if err := p.compareOps(ctx, "checkpointer", ops, modes, bf, external); err != nil {
		return err
	}
	p.summary(env.rawMode)
	p.rows = nil
	return nil
}

// template is a thread written by the saver, as stored: the rows scale
// mode copies to every other thread.
type template struct {
	thread string
	ckpts  []tmplCkpt
	blobs  []tmplBlob
	writes []tmplWrite
	ids    []string // checkpoint ids, oldest first
}

type tmplCkpt struct {
	ns, id    string
	parent    *string
	typ       *string
	doc, meta []byte
	idx, pidx int // index of id and parent in template.ids; pidx -1 for none
}

type tmplBlob struct {
	ns, channel, version, typ string
	blob                      []byte
}

type tmplWrite struct {
	ns, checkpoint, task, path string
	idx                        int
	channel                    string
	typ                        *string
	blob                       []byte
	cidx                       int
}

// scaleThread is the name of the k-th seeded thread.
func scaleThread(k int) string { return fmt.Sprintf("s%08d", k) }

// scaleID is the id of template checkpoint id in thread k: the template
// id with its random node (the last 12 hex digits) replaced by k, so that
// ids stay unique across threads, keep their order, step and time.
func scaleID(id string, k int) string {
	if len(id) != 36 {
		return fmt.Sprintf("%s-%d", id, k)
	}
	return id[:24] + fmt.Sprintf("%012x", k)
}

// replaceIDs returns b with every template id replaced by thread k's.
func (t *template) replaceIDs(b []byte, k int, ids ...string) []byte {
	for _, id := range ids {
		b = []byte(strings.ReplaceAll(string(b), id, scaleID(id, k)))
	}
	return b
}

// seedTemplate writes per checkpoints, each with 3 pending writes, to
// thread through the plaintext saver: the shape of the classic read thread.
func seedTemplate(ctx context.Context, s checkpointer.Saver, thread string, per int) error {
	fx := newCPFixture()
	parent := ""
	for i := range int64(per) {
		vers := benchVersions(i)
		cp := fx.checkpoint(int(i), vers)
		nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
		if i == 0 {
			nv = vers
		}
		md := checkpointer.Metadata{"source": "loop", "step": i}
		if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, nv); err != nil {
			return err
		}
		ws := []checkpointer.Write{{Channel: "messages", Value: "w1"}, {Channel: "scratch", Value: "w2"}, {Channel: "summary", Value: "w3"}}
		if err := s.PutWrites(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: cp.ID}, ws, "task", ""); err != nil {
			return err
		}
		parent = cp.ID
	}
	return nil
}

// index fills the template's id indexes and refuses rows that name their
// thread (they could not be copied to another thread unchanged).
func (t *template) index() error {
	pos := map[string]int{}
	for i := range t.ckpts {
		pos[t.ckpts[i].id] = i
		t.ids = append(t.ids, t.ckpts[i].id)
	}
	for i := range t.ckpts {
		c := &t.ckpts[i]
		c.idx, c.pidx = i, -1
		if c.parent != nil {
			j, ok := pos[*c.parent]
			if !ok {
				return fmt.Errorf("template checkpoint %s: parent %s not in the thread", c.id, *c.parent)
			}
			c.pidx = j
		}
		if strings.Contains(string(c.doc), t.thread) || strings.Contains(string(c.meta), t.thread) {
			return fmt.Errorf("template checkpoint %s names its thread: rows cannot be copied", c.id)
		}
	}
	for i := range t.writes {
		j, ok := pos[t.writes[i].checkpoint]
		if !ok {
			return fmt.Errorf("template write of unknown checkpoint %s", t.writes[i].checkpoint)
		}
		t.writes[i].cidx = j
	}
	for _, b := range t.blobs {
		if strings.Contains(string(b.blob), t.thread) {
			return fmt.Errorf("template value %s names its thread: rows cannot be copied", b.channel)
		}
	}
	return nil
}

// ckptRow is checkpoint row i of thread k: thread, ns, id, parent, type,
// document, metadata.
func (t *template) ckptRow(k, i int) (string, string, string, *string, *string, []byte, []byte) {
	c := &t.ckpts[i]
	var parent *string
	ids := []string{c.id}
	if c.pidx >= 0 {
		p := scaleID(t.ids[c.pidx], k)
		parent = &p
		ids = append(ids, t.ids[c.pidx])
	}
	return scaleThread(k), c.ns, scaleID(c.id, k), parent, c.typ, t.replaceIDs(c.doc, k, ids...), t.replaceIDs(c.meta, k, ids...)
}

// scaleSet is one seeded data set of scale mode.
type scaleSet struct {
	label   string
	env     *cpEnv
	threads int
	tmpl    *template
	puts    atomic.Int64
}

// benchScale seeds the big and the small data set (same thread shape)
// and measures both in the same alternating slices.
func benchScale(ctx context.Context, p *benchPrinter, be *shapeBackend, bf params, sf shapeParams) error {
	per := sf.scale / sf.threads
	sets := []*scaleSet{
		{label: countLabel(sf.scaleBase / per * per), threads: sf.scaleBase / per},
		{label: countLabel(sf.threads * per), threads: sf.threads},
	}
	for _, set := range sets {
		env, err := be.open(ctx, "s"+set.label, []string{"plaintext"})
		if err != nil {
			return err
		}
		defer env.close()
		set.env = env
		start := time.Now()
		if err := seedScale(ctx, set, per); err != nil {
			return fmt.Errorf("seed %s: %w", set.label, err)
		}
		if !p.json {
			fmt.Fprintf(p.out, "seeded %s: %d threads × %d checkpoints (3 writes each) in %s\n", set.label, set.threads, per, time.Since(start).Round(time.Second))
		}
	}
	if !p.json {
		fmt.Fprintf(p.out, "scale mode: plaintext saver (an encrypted saver's SQL is the same; its extra cost is per row, not per table size)\n\n")
	}
	var modes []string
	rawMode := sets[0].env.rawMode
	setOf := map[string]*scaleSet{}
	for _, set := range sets {
		for _, m := range []string{rawMode, "plaintext"} {
			name := m + "@" + set.label
			modes = append(modes, name)
			setOf[name] = set
		}
	}
	fx := newCPFixture()
	ops := []namedOp{
		{"get_tuple", func(mode string) benchOp {
			set, m := setOf[mode], baseMode(mode)
			return func(ctx context.Context, _ int64) error {
				return set.env.getLatest(ctx, m, scaleThread(rand.IntN(set.threads)), "")
			}
		}},
		{"get_tuple_by_id", func(mode string) benchOp {
			set, m := setOf[mode], baseMode(mode)
			return func(ctx context.Context, _ int64) error {
				k := rand.IntN(set.threads)
				return set.env.getLatest(ctx, m, scaleThread(k), scaleID(set.tmpl.ids[rand.IntN(len(set.tmpl.ids))], k))
			}
		}},
		{"list10", func(mode string) benchOp {
			set, m := setOf[mode], baseMode(mode)
			return func(ctx context.Context, _ int64) error {
				return set.env.list(ctx, m, scaleThread(rand.IntN(set.threads)), min(10, per))
			}
		}},
		{"put", func(mode string) benchOp {
			set, m := setOf[mode], baseMode(mode)
			return func(ctx context.Context, _ int64) error {
				k := rand.IntN(set.threads)
				n := int64(per) + set.puts.Add(1)
				vers := benchVersions(n)
				cp := fx.checkpoint(int(n), vers)
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				md := checkpointer.Metadata{"source": "loop", "step": n}
				thread, parent := scaleThread(k), scaleID(set.tmpl.ids[len(set.tmpl.ids)-1], k)
				if m == set.env.rawMode {
					return set.env.raw.putWithParent(ctx, thread, parent, cp, md, nv)
				}
				_, err := set.env.savers[m].Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, nv)
				return err
			}
		}},
	}
	if err := p.compareOps(ctx, "checkpointer", ops, modes, bf, nil); err != nil {
		return err
	}
	if !p.json {
		fmt.Fprintf(p.out, "\n%s against %s (same mode, op, concurrency; flat: p50 within 1.5x):\n", sets[1].label, sets[0].label)
		for _, r := range p.rows {
			if setOf[r.Mode] != sets[1] {
				continue
			}
			small := baseMode(r.Mode) + "@" + sets[0].label
			for _, b := range p.rows {
				if b.Mode != small || b.Op != r.Op || b.Concurrency != r.Concurrency {
					continue
				}
				// The verdict goes by p50: on a shared machine a
				// neighbour's burst moves throughput and p99 of one slice,
				// the median much less.
				slow, lat := b.OpsPerS/r.OpsPerS, r.P50ms/b.P50ms
				verdict := "flat"
				if lat > 1.5 {
					verdict = "NOT FLAT"
				}
				fmt.Fprintf(p.out, "  %-16s %-10s c=%-3d throughput %s/%s %5.2fx, p50 %s/%s %5.2fx  %s\n", r.Op, baseMode(r.Mode), r.Concurrency,
					sets[0].label, sets[1].label, slow, sets[1].label, sets[0].label, lat, verdict)
			}
		}
	}
	p.summaryScale(rawMode, sets[0].label, sets[1].label)
	p.rows = nil
	return nil
}

// summaryScale prints the library's throughput relative to the raw
// baseline on the same data set.
func (p *benchPrinter) summaryScale(rawMode string, labels ...string) {
	if p.json {
		return
	}
	fmt.Fprintf(p.out, "\nplaintext relative to %s on the same data set:\n", rawMode)
	for _, r := range p.rows {
		for _, l := range labels {
			if r.Mode != "plaintext@"+l {
				continue
			}
			for _, b := range p.rows {
				if b.Mode == rawMode+"@"+l && b.Op == r.Op && b.Concurrency == r.Concurrency {
					fmt.Fprintf(p.out, "  %-16s %-10s c=%-3d %5.2fx\n", r.Op, l, r.Concurrency, r.OpsPerS/b.OpsPerS)
				}
			}
		}
	}
}

func baseMode(mode string) string { m, _, _ := strings.Cut(mode, "@"); return m }

// countLabel spells a checkpoint count short: 10k, 1M, 2500.
func countLabel(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// seedScale writes the template thread through the saver, copies its rows
// to set.threads threads, checks that a copy reads back as the template
// does, and drops the template thread.
func seedScale(ctx context.Context, set *scaleSet, per int) error {
	const tmplThread = "scale-template-thread"
	s := set.env.savers["plaintext"]
	if err := seedTemplate(ctx, s, tmplThread, per); err != nil {
		return err
	}
	tmpl := &template{thread: tmplThread}
	set.tmpl = tmpl
	if err := set.env.seed(ctx, tmpl, set.threads); err != nil {
		return err
	}
	want, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: tmplThread})
	if err != nil {
		return err
	}
	got, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: scaleThread(set.threads - 1)})
	if err != nil {
		return err
	}
	if got == nil || want == nil || !reflect.DeepEqual(got.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues) ||
		!reflect.DeepEqual(got.PendingWrites, want.PendingWrites) || !reflect.DeepEqual(got.Metadata, want.Metadata) {
		return fmt.Errorf("a copied thread does not read back as the template thread")
	}
	if err := s.DeleteThread(ctx, tmplThread); err != nil {
		return err
	}
	return set.env.stats(ctx)
}

// pgShapeBackend opens environments in schemas of their own on dsn.
func pgShapeBackend(ctx context.Context, dsn string, conc int) (*shapeBackend, error) {
	pool, schema, drop, err := benchSchema(ctx, dsn, conc)
	if err != nil {
		return nil, err
	}
	settings, err := clusterSettings(ctx, pool)
	if err != nil {
		drop()
		return nil, err
	}
	sers, err := benchSerializers()
	if err != nil {
		drop()
		return nil, err
	}
	var extra []string
	be := &shapeBackend{name: "PostgreSQL (schemas " + schema + "_*)", settings: settings}
	be.close = func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, s := range extra {
			_, _ = pool.Exec(c, "DROP SCHEMA "+pgx.Identifier{s}.Sanitize()+" CASCADE")
		}
		drop()
	}
	be.open = func(ctx context.Context, label string, modes []string) (*cpEnv, error) {
		sch := schema + "_" + strings.ToLower(label)
		if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{sch}.Sanitize()); err != nil {
			return nil, err
		}
		extra = append(extra, sch)
		env := &cpEnv{pool: pool, schema: sch, savers: map[string]checkpointer.Saver{}, raw: newRawCheckpointer(pool, sch), rawMode: "raw-pgx", close: func() {}}
		for i, mode := range modes {
			s, err := pgsaver.New(pool, pgsaver.Options{Schema: sch, Serde: sers[mode]})
			if err != nil {
				return nil, err
			}
			if i == 0 {
				if err := s.Setup(ctx); err != nil {
					return nil, err
				}
			}
			env.savers[mode] = s
		}
		tables := []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"}
		env.stats = func(ctx context.Context) error {
			for _, t := range tables {
				if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{sch, t}.Sanitize()); err != nil {
					return err
				}
			}
			return nil
		}
		env.seed = func(ctx context.Context, t *template, n int) error {
			if err := pgReadTemplate(ctx, pool, sch, t); err != nil {
				return err
			}
			return pgCopyTemplate(ctx, pool, sch, t, n)
		}
		return env, nil
	}
	return be, nil
}

func pgReadTemplate(ctx context.Context, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sch string, t *template) error {
	id := func(s string) string { return pgx.Identifier{sch, s}.Sanitize() }
	rows, err := pool.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint::text, metadata::text FROM `+
		id("checkpoints")+` WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id`, t.thread)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c tmplCkpt
		var doc, meta string
		if err := rows.Scan(&c.ns, &c.id, &c.parent, &c.typ, &doc, &meta); err != nil {
			rows.Close()
			return err
		}
		c.doc, c.meta = []byte(doc), []byte(meta)
		t.ckpts = append(t.ckpts, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = pool.Query(ctx, `SELECT checkpoint_ns, channel, version, type, blob FROM `+id("checkpoint_blobs")+` WHERE thread_id = $1`, t.thread)
	if err != nil {
		return err
	}
	for rows.Next() {
		var b tmplBlob
		if err := rows.Scan(&b.ns, &b.channel, &b.version, &b.typ, &b.blob); err != nil {
			rows.Close()
			return err
		}
		t.blobs = append(t.blobs, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = pool.Query(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob FROM `+id("checkpoint_writes")+` WHERE thread_id = $1`, t.thread)
	if err != nil {
		return err
	}
	for rows.Next() {
		var w tmplWrite
		if err := rows.Scan(&w.ns, &w.checkpoint, &w.task, &w.path, &w.idx, &w.channel, &w.typ, &w.blob); err != nil {
			rows.Close()
			return err
		}
		t.writes = append(t.writes, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return t.index()
}

// pgCopyTemplate copies the template's rows to n threads with COPY, the
// three tables at once on three connections.
func pgCopyTemplate(ctx context.Context, pool interface {
	CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error)
}, sch string, t *template, n int) error {
	gen := func(total int, row func(i int) []any) pgx.CopyFromSource {
		i := 0
		return pgx.CopyFromFunc(func() ([]any, error) {
			if i >= total {
				return nil, nil
			}
			r := row(i)
			i++
			return r, nil
		})
	}
	copies := []func() error{
		func() error {
			per := len(t.ckpts)
			_, err := pool.CopyFrom(ctx, pgx.Identifier{sch, "checkpoints"},
				[]string{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"},
				gen(n*per, func(i int) []any {
					th, ns, id, parent, typ, doc, meta := t.ckptRow(i/per, i%per)
					return []any{th, ns, id, parent, typ, string(doc), string(meta)}
				}))
			return err
		},
		func() error {
			per := len(t.blobs)
			_, err := pool.CopyFrom(ctx, pgx.Identifier{sch, "checkpoint_blobs"},
				[]string{"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"},
				gen(n*per, func(i int) []any {
					b := &t.blobs[i%per]
					return []any{scaleThread(i / per), b.ns, b.channel, b.version, b.typ, b.blob}
				}))
			return err
		},
		func() error {
			per := len(t.writes)
			_, err := pool.CopyFrom(ctx, pgx.Identifier{sch, "checkpoint_writes"},
				[]string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx", "channel", "type", "blob"},
				gen(n*per, func(i int) []any {
					w, k := &t.writes[i%per], i/per
					return []any{scaleThread(k), w.ns, scaleID(w.checkpoint, k), w.task, w.path, int32(w.idx), w.channel, w.typ, w.blob}
				}))
			return err
		},
	}
	errs := make(chan error, len(copies))
	for _, c := range copies {
		go func() { errs <- c() }()
	}
	var first error
	for range copies {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sqliteShapeBackend opens environments on files of a temporary directory.
func sqliteShapeBackend(ctx context.Context) (*shapeBackend, error) {
	dir, err := os.MkdirTemp("", "memvault-bench-")
	if err != nil {
		return nil, err
	}
	sers, err := benchSerializers()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	be := &shapeBackend{name: "SQLite (" + dir + ")", close: func() { os.RemoveAll(dir) }}
	probe, err := openSQLitePools(ctx, filepath.Join(dir, "probe.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, name := range []string{"sqlite_version()", "journal_mode", "synchronous", "page_size", "mmap_size", "cache_size"} {
		q := "PRAGMA " + name
		if strings.HasSuffix(name, ")") {
			q = "SELECT " + name
		}
		var v string
		if err := probe.Reader().QueryRowContext(ctx, q).Scan(&v); err != nil {
			probe.Close()
			os.RemoveAll(dir)
			return nil, err
		}
		be.settings = append(be.settings, [2]string{strings.TrimSuffix(name, "()"), v})
	}
	probe.Close()
	be.open = func(ctx context.Context, label string, modes []string) (*cpEnv, error) {
		return openSQLiteEnv(ctx, filepath.Join(dir, label+".db"), modes, sers)
	}
	return be, nil
}

func openSQLiteEnv(ctx context.Context, path string, modes []string, sers map[string]serde.Serializer) (*cpEnv, error) {
	var closers []func()
	env := &cpEnv{path: path, savers: map[string]checkpointer.Saver{}, rawMode: "raw-sql"}
	env.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	for _, mode := range modes {
		s, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: sers[mode], NoMmap: true})
		if err != nil {
			env.close()
			return nil, err
		}
		closers = append(closers, func() { s.Close() })
		env.savers[mode] = s
	}
	raw, err := newRawSQLite(ctx, path)
	if err != nil {
		env.close()
		return nil, err
	}
	closers = append(closers, raw.close)
	env.raw = raw
	env.stats = raw.analyze
	env.seed = raw.seedTemplate
	return env, nil
}

// growingThreads are the threads put_messages grows, each by one step per
// operation. A thread is taken by one operation at a time, so that a step
// is never written before its parent (which the savers refuse, as a
// parent that is gone); there are as many as operations ever in flight.
type growingThreads struct {
	seq  atomic.Int64 // makes the ids: increasing, so that they sort by step
	mu   sync.Mutex
	free []*growingThread
	n    int // threads made
}

// growingThread is one thread of put_messages: gen counts its restarts
// after messagesSteps steps, each under a new name.
type growingThread struct {
	k, gen, step int
	last         int64 // the id number of the latest step
}

// take returns a free thread, or a new one.
func (g *growingThreads) take() *growingThread {
	g.mu.Lock()
	defer g.mu.Unlock()
	if k := len(g.free); k > 0 {
		t := g.free[k-1]
		g.free = g.free[:k-1]
		return t
	}
	g.n++
	return &growingThread{k: g.n - 1}
}

// put frees t for the next operation.
func (g *growingThreads) put(t *growingThread) {
	g.mu.Lock()
	g.free = append(g.free, t)
	g.mu.Unlock()
}

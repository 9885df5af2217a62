package interop_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var updateFixtures = flag.Bool("update-fixtures", false, "regenerate testdata/js_rows.sql and testdata/js_rows.json by running JS LangGraph (needs node and interop/js/node_modules)")

// nodeTimeout bounds one node invocation; a script takes about a second.
const nodeTimeout = 90 * time.Second

const jsDir = "js"

// requireNode returns the path of node, skipping the test under -short and
// failing it otherwise when node or the npm packages are missing.
func requireNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph-checkpoint-postgres", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("interop: JS LangGraph is not available (%v): these tests need Node.js >= 20 and the npm packages of interop/js; run scripts/install-deps.sh (it runs `npm ci --prefix interop/js` when node and npm are installed)", err)
		if testing.Short() {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return node
}

// nodeEnv returns the libpq environment variables that point node-postgres
// at the test database.
func nodeEnv(t testing.TB) []string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatalf("parse test DSN: %v", err)
	}
	env := os.Environ()
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PG") })
	return append(env,
		"PGHOST="+cfg.Host,
		"PGPORT="+strconv.Itoa(int(cfg.Port)),
		"PGUSER="+cfg.User,
		"PGPASSWORD="+cfg.Password,
		"PGDATABASE="+cfg.Database,
		"PGSSLMODE=disable",
		"PGCONNECT_TIMEOUT=10",
	)
}

// execNode runs a script of interop/js, bounded by nodeTimeout, and returns
// its standard output and error.
func execNode(t testing.TB, script string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = jsDir
	cmd.Env = nodeEnv(t)
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// runNode runs a script of interop/js and decodes the JSON line it prints
// into out.
func runNode(t testing.TB, out any, script string, args ...string) {
	t.Helper()
	stdout, stderr, err := execNode(t, script, args...)
	if err != nil {
		t.Fatalf("node %s %s: %v\n%s", script, strings.Join(args, " "), err, stderr)
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("node %s: output: %v\n%.2000s", script, err, stdout)
	}
}

// valueView is one value as the JS scripts print it (lib.mjs valueView):
// the (type, data) pair JS writes for it and a description of the JS value.
type valueView struct {
	Type   string          `json:"type"`
	JSON   string          `json:"json,omitempty"`
	Base64 string          `json:"base64,omitempty"`
	JS     json.RawMessage `json:"js"`
}

// writeView is a pending write: [task_id, channel, value].
type writeView struct {
	TaskID  string
	Channel string
	Value   valueView
}

// MarshalJSON writes the write back as JS prints it.
func (w writeView) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{w.TaskID, w.Channel, w.Value})
}

func (w *writeView) UnmarshalJSON(b []byte) error {
	var a []json.RawMessage
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	if len(a) != 3 {
		return fmt.Errorf("pending write has %d elements, want 3", len(a))
	}
	if err := json.Unmarshal(a[0], &w.TaskID); err != nil {
		return err
	}
	if err := json.Unmarshal(a[1], &w.Channel); err != nil {
		return err
	}
	return json.Unmarshal(a[2], &w.Value)
}

// tupleView is a CheckpointTuple as JS reads it (lib.mjs tupleView).
type tupleView struct {
	Config struct {
		ThreadID     string `json:"thread_id"`
		CheckpointNS string `json:"checkpoint_ns"`
		CheckpointID string `json:"checkpoint_id"`
	} `json:"config"`
	ParentID   *string `json:"parent_checkpoint_id"`
	Checkpoint struct {
		V               int                                   `json:"v"`
		ID              string                                `json:"id"`
		TS              string                                `json:"ts"`
		ChannelVersions map[string]json.RawMessage            `json:"channel_versions"`
		VersionsSeen    map[string]map[string]json.RawMessage `json:"versions_seen"`
	} `json:"checkpoint"`
	ChannelValues map[string]valueView `json:"channel_values"`
	Metadata      json.RawMessage      `json:"metadata"`
	PendingWrites []writeView          `json:"pending_writes"`
}

// writeOutput is what write.mjs prints.
type writeOutput struct {
	Threads map[string]map[string]string `json:"threads"`
	Tuples  map[string][]tupleView       `json:"tuples"`
}

// readOutput is what read.mjs prints.
type readOutput struct {
	Tuples    []tupleView `json:"tuples"`
	Latest    *tupleView  `json:"latest"`
	Continued *struct {
		Config struct {
			ThreadID     string `json:"thread_id"`
			CheckpointNS string `json:"checkpoint_ns"`
			CheckpointID string `json:"checkpoint_id"`
		} `json:"config"`
		Tuple tupleView `json:"tuple"`
	} `json:"continued"`
}

// decodeJSON decodes JSON keeping numbers exact (json.Number).
func decodeJSON(t testing.TB, what string, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: decode %.200q: %v", what, b, err)
	}
	return v
}

// isUndefinedRecord reports whether v is JS's undefined: the record
// {"lc":2,"type":"undefined"} JS writes for it, or lib.mjs's description
// {"$undefined":true}. memvault reads it as nil and writes that back as
// null, so after a round trip through memvault JS sees null where it had
// undefined; the comparisons take the two as equal.
func isUndefinedRecord(v any) bool {
	m, ok := v.(map[string]any)
	if ok && len(m) == 1 && m["$undefined"] == true {
		return true
	}
	return ok && len(m) == 2 && m["type"] == "undefined" && m["lc"] == json.Number("2")
}

// sameJSON compares decoded JSON trees: objects by key, numbers by value
// (so 1e21 equals 1000000000000000000000). JS's undefined record is taken
// as null, the value memvault reads it as (checked separately). It returns a
// description of the first difference, or "".
func sameJSON(path string, got, want any) string {
	if isUndefinedRecord(got) {
		got = nil
	}
	if isUndefinedRecord(want) {
		want = nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", path, got)
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := w[k]
			if gok != wok {
				return fmt.Sprintf("%s.%s: present %v, want present %v", path, k, gok, wok)
			}
			if d := sameJSON(path+"."+k, gv, wv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %v", path, got, want)
		}
		for i := range w {
			if d := sameJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: got %v, want number %s", path, got, w)
		}
		gr, ok1 := new(big.Rat).SetString(g.String())
		wr, ok2 := new(big.Rat).SetString(w.String())
		if !ok1 || !ok2 || gr.Cmp(wr) != 0 {
			return fmt.Sprintf("%s: got %s, want %s", path, g, w)
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%s: got %#v, want %#v", path, got, want)
	}
	return ""
}

// checkValue reports whether memvault's value v is the value JS describes
// by want: memvault's JSONPlus writes it as the same (type, data) pair JS
// writes, up to key order and number spelling.
func checkValue(t testing.TB, what string, v any, want valueView) {
	t.Helper()
	if v == nil {
		// memvault writes nil as type "null" (Python's tag), which JS cannot
		// read (see TestMemvaultNullJSReadable); here only the value read
		// matters: JS's null (or undefined).
		if want.Type != serde.TypeJSON || sameJSON(what, nil, decodeJSON(t, what, []byte(want.JSON))) != "" {
			t.Errorf("%s: memvault reads nil, JS %s %s%s", what, want.Type, want.JSON, want.Base64)
		}
		return
	}
	typ, data, err := serde.JSONPlus{}.DumpsTyped(v)
	if err != nil {
		t.Errorf("%s: memvault cannot re-serialize %#v: %v", what, v, err)
		return
	}
	if typ != want.Type {
		t.Errorf("%s: memvault writes type %q (%q), JS %q (%s%s)", what, typ, data, want.Type, want.JSON, want.Base64)
		return
	}
	switch typ {
	case serde.TypeJSON:
		if d := sameJSON(what, decodeJSON(t, what, data), decodeJSON(t, what, []byte(want.JSON))); d != "" {
			t.Errorf("%s\n memvault: %s\n JS:       %s", d, data, want.JSON)
		}
	default:
		w, err := base64.StdEncoding.DecodeString(want.Base64)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.Equal(data, w) {
			t.Errorf("%s: memvault bytes %x, JS %x", what, data, w)
		}
	}
}

// versionText renders a version as JS holds it (a JSON number or string)
// the way memvault carries it: decimal text.
func versionText(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	switch v := decodeJSON(t, "version", raw).(type) {
	case json.Number:
		return v.String()
	case string:
		return v
	default:
		t.Fatalf("version %s is neither a number nor a string", raw)
		return ""
	}
}

// checkTuple compares a tuple memvault read with the same checkpoint as JS
// reads it: ids, parent, format version, timestamp, versions (JS integers
// are memvault's "1", "2", ...), channel values, metadata and pending
// writes in order.
func checkTuple(t testing.TB, got *checkpointer.Tuple, want tupleView) {
	t.Helper()
	label := fmt.Sprintf("%s/%q/%s", want.Config.ThreadID, want.Config.CheckpointNS, want.Config.CheckpointID)
	if got == nil {
		t.Errorf("%s: memvault finds no checkpoint", label)
		return
	}
	if g := got.Config; g.ThreadID != want.Config.ThreadID || g.CheckpointNS != want.Config.CheckpointNS || g.CheckpointID != want.Config.CheckpointID {
		t.Errorf("%s: config = %+v", label, g)
	}
	var gotParent *string
	if got.ParentConfig != nil {
		gotParent = &got.ParentConfig.CheckpointID
		if got.ParentConfig.ThreadID != want.Config.ThreadID || got.ParentConfig.CheckpointNS != want.Config.CheckpointNS {
			t.Errorf("%s: parent config = %+v", label, *got.ParentConfig)
		}
	}
	if (gotParent == nil) != (want.ParentID == nil) || (gotParent != nil && *gotParent != *want.ParentID) {
		t.Errorf("%s: parent = %v, want %v", label, deref(gotParent), deref(want.ParentID))
	}
	cp := got.Checkpoint
	if cp.V != want.Checkpoint.V || cp.ID != want.Checkpoint.ID {
		t.Errorf("%s: v, id = %d, %s; want %d, %s", label, cp.V, cp.ID, want.Checkpoint.V, want.Checkpoint.ID)
	}
	if ts, err := time.Parse(time.RFC3339Nano, want.Checkpoint.TS); err != nil || !cp.TS.Equal(ts) {
		t.Errorf("%s: ts = %v, want %s (%v)", label, cp.TS, want.Checkpoint.TS, err)
	}
	wantVersions := map[string]string{}
	for ch, raw := range want.Checkpoint.ChannelVersions {
		wantVersions[ch] = versionText(t, raw)
	}
	if !maps2Equal(cp.ChannelVersions, wantVersions) {
		t.Errorf("%s: channel_versions = %v, want %v", label, cp.ChannelVersions, wantVersions)
	}
	wantSeen := map[string]map[string]string{}
	for node, seen := range want.Checkpoint.VersionsSeen {
		m := map[string]string{}
		for ch, raw := range seen {
			m[ch] = versionText(t, raw)
		}
		wantSeen[node] = m
	}
	if !reflect.DeepEqual(nonNilSeen(cp.VersionsSeen), wantSeen) {
		t.Errorf("%s: versions_seen = %v, want %v", label, cp.VersionsSeen, wantSeen)
	}
	gotChans := sortedKeys(cp.ChannelValues)
	wantChans := sortedKeys(want.ChannelValues)
	if !slices.Equal(gotChans, wantChans) {
		t.Errorf("%s: channels with values = %v, want %v", label, gotChans, wantChans)
	}
	for ch, wv := range want.ChannelValues {
		if v, ok := cp.ChannelValues[ch]; ok {
			checkValue(t, label+" channel "+ch, v, wv)
		}
	}
	md, err := json.Marshal(got.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameJSON(label+" metadata", decodeJSON(t, "metadata", md), decodeJSON(t, "metadata", want.Metadata)); d != "" {
		t.Errorf("%s (memvault %s, JS %s)", d, md, want.Metadata)
	}
	if len(got.PendingWrites) != len(want.PendingWrites) {
		t.Errorf("%s: %d pending writes, want %d: %+v", label, len(got.PendingWrites), len(want.PendingWrites), got.PendingWrites)
		return
	}
	for i, w := range want.PendingWrites {
		g := got.PendingWrites[i]
		if g.TaskID != w.TaskID || g.Channel != w.Channel {
			t.Errorf("%s: pending write %d = (%s, %s), want (%s, %s)", label, i, g.TaskID, g.Channel, w.TaskID, w.Channel)
			continue
		}
		checkValue(t, fmt.Sprintf("%s write %d (%s/%s)", label, i, w.TaskID, w.Channel), g.Value, w.Value)
	}
}

// checkSameJSView compares two JS readings of a checkpoint (for example
// before and after memvault copied the thread): everything JS sees must be
// the same, timestamps compared as instants.
func checkSameJSView(t testing.TB, label string, got, want tupleView) {
	t.Helper()
	gts, err1 := time.Parse(time.RFC3339Nano, got.Checkpoint.TS)
	wts, err2 := time.Parse(time.RFC3339Nano, want.Checkpoint.TS)
	if err1 != nil || err2 != nil || !gts.Equal(wts) {
		t.Errorf("%s: ts %q, want %q", label, got.Checkpoint.TS, want.Checkpoint.TS)
	}
	got.Checkpoint.TS, want.Checkpoint.TS = "", ""
	canonicalView(t, &got)
	canonicalView(t, &want)
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if d := sameJSON(label, decodeJSON(t, label, g), decodeJSON(t, label, w)); d != "" {
		t.Errorf("%s\n got:  %s\n want: %s", d, g, w)
	}
}

// undefinedAsNull replaces JS's undefined records in a decoded JSON tree by
// nil (see isUndefinedRecord).
func undefinedAsNull(v any) any {
	if isUndefinedRecord(v) {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = undefinedAsNull(e)
		}
	case []any:
		for i, e := range x {
			x[i] = undefinedAsNull(e)
		}
	}
	return v
}

// canonicalView rewrites the JSON texts of v's values with sorted keys and
// undefined as null, so views compare whatever key order the writer chose.
func canonicalView(t testing.TB, v *tupleView) {
	t.Helper()
	canon := func(vv valueView) valueView {
		if vv.Type == serde.TypeJSON {
			b, err := json.Marshal(undefinedAsNull(decodeJSON(t, "value", []byte(vv.JSON))))
			if err != nil {
				t.Fatal(err)
			}
			vv.JSON = string(b)
		}
		return vv
	}
	values := make(map[string]valueView, len(v.ChannelValues))
	for ch, vv := range v.ChannelValues {
		values[ch] = canon(vv)
	}
	v.ChannelValues = values
	writes := make([]writeView, len(v.PendingWrites))
	for i, w := range v.PendingWrites {
		w.Value = canon(w.Value)
		writes[i] = w
	}
	v.PendingWrites = writes
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func maps2Equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func nonNilSeen(m map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(m))
	for k, v := range m {
		if v == nil {
			v = map[string]string{}
		}
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// collect drains a List.
func collect(t testing.TB, seq func(func(*checkpointer.Tuple, error) bool)) []*checkpointer.Tuple {
	t.Helper()
	var out []*checkpointer.Tuple
	for tu, err := range seq {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out = append(out, tu)
	}
	return out
}

// migrationVersions returns the versions recorded in schema's
// checkpoint_migrations.
func migrationVersions(t testing.TB, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, schema string) []int {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT v FROM "+pgx.Identifier{schema, "checkpoint_migrations"}.Sanitize()+" ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func upTo(n int) []int {
	out := make([]int, n+1)
	for i := range out {
		out[i] = i
	}
	return out
}

// fixtureThreads checks the ids a JS writer reported against the exported
// thread constants.
func fixtureThreads(t testing.TB, out writeOutput) {
	t.Helper()
	for _, th := range []string{jsrows.JSGraphThread, jsrows.JSSendsThread} {
		if len(out.Tuples[th]) == 0 {
			t.Fatalf("JS wrote no checkpoint in thread %q", th)
		}
	}
}

// cpTime is a fixed checkpoint time, n microseconds into it.
func cpTime(n int) time.Time {
	return time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC).Add(time.Duration(n) * time.Microsecond)
}

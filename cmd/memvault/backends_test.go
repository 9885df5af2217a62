package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/backends/redis/redistest"
)

// randomName is a fresh MongoDB database name or Redis key prefix, so
// that tests sharing a server do not see each other's data.
func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// startMongo starts a FerretDB of its own for t (mongotest: a real
// MongoDB-protocol server; a server that cannot start fails t).
func startMongo(t *testing.T) string {
	t.Helper()
	s, err := mongotest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s.URI
}

// refusedFeatures checks, on the database env names, that what the
// backend cannot do is refused with an error naming it; hasStore: the
// backend has a long-term memory store (the store commands are not
// refused).
func refusedFeatures(t *testing.T, env []string, backend string, hasStore bool) {
	t.Helper()
	audit := "the audit trail (MEMVAULT_AUDIT) needs an audit table, which the " + backend + " backend does not have"
	if backend == "mongodb" {
		// MongoDB has the trail, in a SQLite file that must be named.
		audit = "the audit trail on the mongodb backend lives in a SQLite file apart from the data: set MEMVAULT_AUDIT_TABLE"
	}
	for _, c := range []struct {
		extra []string
		args  []string
		want  string
	}{
		{[]string{"MEMVAULT_AUDIT=true"}, []string{"threads", "list"}, audit},
		{[]string{"MEMVAULT_SUBJECT_THREAD_SEPARATOR=:"}, []string{"threads", "list"}, "per-subject keys"},
		{nil, []string{"keys", "census"}, "not supported by this backend: the key census"},
		{nil, []string{"store", "put", "users", "alice", "k", `{"text":"x"}`}, "this backend has no store: the " + backend + " backend has a checkpointer but no long-term memory store"},
		{nil, []string{"store", "get", "users", "alice", "k"}, "this backend has no store"},
	} {
		if hasStore && c.args[0] == "store" {
			continue
		}
		r := cli(t, append(append([]string{}, env...), c.extra...), "", c.args...).must(t, 1)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v with %v: stderr %q, want %q", c.args, c.extra, r.stderr, c.want)
		}
	}
}

// wrongKey checks that another key than the one the data was sealed
// under is refused at open, before any command reads.
func wrongKey(t *testing.T, env []string) {
	t.Helper()
	other := append(append([]string{}, env...), "LANGGRAPH_AES_KEY=fedcba9876543210fedcba9876543210")
	r := cli(t, other, "", "threads", "list").must(t, 1)
	if !strings.Contains(r.stderr, "holds data under a key that is not loaded") {
		t.Errorf("threads list under another key: stderr %q, want the key-not-loaded error", r.stderr)
	}
}

// TestMongoDBBackend runs the CLI on MongoDB (FerretDB) through --dsn and
// MEMVAULT_DSN: migrate creates the saver's indexes, the thread commands
// put and read checkpoints encrypted as configured, what MongoDB cannot do
// is refused.
func TestMongoDBBackend(t *testing.T) {
	uri := startMongo(t)
	dbName := randomName("cli")
	env := []string{"MEMVAULT_DSN=" + uri, "MEMVAULT_SCHEMA=" + dbName, "LANGGRAPH_AES_KEY=" + testKey}

	// Nothing there yet: read commands refuse to open (not found), as
	// with SQLite and PostgreSQL.
	r := cli(t, env, "", "threads", "list").must(t, 1)
	if !strings.Contains(r.stderr, "database not found: MongoDB database \""+dbName+"\" has no collections") {
		t.Fatalf("threads list before migrate: %q", r.stderr)
	}

	var ms struct {
		Backend string
		Tables  []struct {
			Table   string
			Indexes []string
		}
	}
	// --dsn instead of MEMVAULT_DSN, --schema instead of MEMVAULT_SCHEMA.
	out := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "migrate", "--json", "--dsn", uri, "--schema", dbName).must(t, 0).stdout
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		t.Fatal(err)
	}
	indexes := map[string][]string{}
	for _, m := range ms.Tables {
		indexes[m.Table] = m.Indexes
	}
	if ms.Backend != "mongodb" || strings.Join(indexes["checkpoints"], ",") != "thread_id_1_checkpoint_ns_1_checkpoint_id_-1" ||
		strings.Join(indexes["checkpoint_writes"], ",") != "thread_id_1_checkpoint_ns_1_checkpoint_id_-1_task_id_1_idx_1" {
		t.Fatalf("migrate = %s", out)
	}
	// The indexes are on the server, unique, as Python's MongoDBSaver makes them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	db := client.Database(dbName)
	specs, err := db.Collection("checkpoints").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unique := false
	for _, s := range specs {
		unique = unique || (s.Name == "thread_id_1_checkpoint_ns_1_checkpoint_id_-1" && s.Unique != nil && *s.Unique)
	}
	if !unique {
		t.Fatalf("checkpoints indexes = %+v, want Python's unique compound index", specs)
	}

	threadsGolden(t, env) // import, history, show, export, fork, delete

	// Encrypted as configured: what the import wrote holds no plaintext.
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	n, err := db.Collection("checkpoints").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: "golden-thread"}})
	if err != nil || n == 0 {
		t.Fatalf("checkpoints of golden-thread: %d, %v", n, err)
	}
	if mongoHoldsPlaintext(t, ctx, db) {
		t.Error("an encrypted configuration stored values in clear")
	}
	// The check finds values stored without a key.
	plainDB := randomName("plain")
	cli(t, []string{"MEMVAULT_DSN=" + uri, "MEMVAULT_SCHEMA=" + plainDB}, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	if !mongoHoldsPlaintext(t, ctx, client.Database(plainDB)) {
		t.Error("a plaintext configuration: values not found in clear (the check above proves nothing)")
	}

	refusedFeatures(t, env, "mongodb", true)

	// The store (Python MongoDBStore's persistent-store): a memory put
	// through the CLI reads back, sealed in the database; the same check
	// finds it in a plaintext configuration.
	secret := "lives in Lisbon, " + randomName("marker")
	cli(t, env, "", "store", "put", "users", "alice", "k", `{"text":"`+secret+`"}`).must(t, 0)
	if got := cli(t, env, "", "store", "get", "users", "alice", "k").must(t, 0).stdout; !strings.Contains(got, secret) {
		t.Errorf("store get = %q, want the value put", got)
	}
	if n, err := db.Collection("persistent-store").CountDocuments(ctx, bson.D{{Key: "namespace_str", Value: "users/alice"}, {Key: "key", Value: "k"}}); err != nil || n != 1 {
		t.Errorf("persistent-store documents of users/alice k: %d, %v; want 1", n, err)
	}
	if mongoHolds(t, ctx, db, secret) {
		t.Error("an encrypted configuration stored a memory in clear")
	}
	cli(t, []string{"MEMVAULT_DSN=" + uri, "MEMVAULT_SCHEMA=" + plainDB}, "", "store", "put", "users", "alice", "k", `{"text":"`+secret+`"}`).must(t, 0)
	if !mongoHolds(t, ctx, client.Database(plainDB), secret) {
		t.Error("a plaintext configuration: the memory not found in clear (the check above proves nothing)")
	}
	wrongKey(t, []string{"MEMVAULT_DSN=" + uri, "MEMVAULT_SCHEMA=" + dbName})
}

// plaintextValues are values of testdata/thread.jsonl (a channel value
// and a pending write's) that no metadata holds: found in a stored
// document or key, they were stored unencrypted.
var plaintextValues = []string{"hi! \U0001F44B", "approve?"}

// mongoHoldsPlaintext reports whether a document of db holds one of
// plaintextValues in clear.
func mongoHoldsPlaintext(t *testing.T, ctx context.Context, db *mongo.Database) bool {
	t.Helper()
	return mongoHolds(t, ctx, db, plaintextValues...)
}

// mongoHolds reports whether a document of db holds one of values in
// clear.
func mongoHolds(t *testing.T, ctx context.Context, db *mongo.Database, values ...string) bool {
	t.Helper()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		cur, err := db.Collection(n).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
			for _, v := range values {
				if strings.Contains(string(cur.Current), v) {
					_ = cur.Close(ctx)
					return true
				}
			}
		}
		_ = cur.Close(ctx)
	}
	return false
}

// redisHoldsPlaintext reports whether a key under prefix holds one of
// plaintextValues in clear.
func redisHoldsPlaintext(t *testing.T, ctx context.Context, rdb *redis.Client, prefix string) bool {
	t.Helper()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under %s: %v, %v", prefix, keys, err)
	}
	for _, k := range keys {
		dump, err := rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range plaintextValues {
			if strings.Contains(dump, v) {
				return true
			}
		}
	}
	return false
}

// redisStoreHolds reports whether a key of the store under schema holds
// secret in clear, reading each key by its type (DUMP may compress).
func redisStoreHolds(t *testing.T, ctx context.Context, rdb *redis.Client, schema, secret string) bool {
	t.Helper()
	keys, err := rdb.Keys(ctx, "{"+schema+":store}*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("the store wrote no keys under {%s:store}: %v, %v", schema, keys, err)
	}
	for _, k := range keys {
		var fields []string
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				fields = append(fields, f, v)
			}
		case "string":
			fields = append(fields, rdb.Get(ctx, k).Val())
		case "zset":
			fields = rdb.ZRange(ctx, k, 0, -1).Val()
		default: // a vector set holds vectors and tags, no value
		}
		for _, f := range fields {
			if strings.Contains(f, secret) {
				return true
			}
		}
	}
	return false
}

// TestRedisBackend runs the CLI on Redis 8 through MEMVAULT_DSN: the thread
// commands put and read checkpoints sealed as configured, migrate has
// nothing to create, what Redis cannot do is refused.
func TestRedisBackend(t *testing.T) {
	srv := redistest.StartT(t, redistest.Options{Version: 8})
	prefix := randomName("cli")
	dsn := "MEMVAULT_DSN=redis://" + srv.Addr + "/0"
	env := []string{dsn, "MEMVAULT_SCHEMA=" + prefix, "LANGGRAPH_AES_KEY=" + testKey}
	out := cli(t, env, "", "migrate").must(t, 0).stdout
	if !strings.Contains(out, "redis database is up to date") || !strings.Contains(out, "keys under "+prefix) {
		t.Fatalf("migrate = %q", out)
	}
	threadsGolden(t, env) // import, history, show, export, fork, delete

	// Sealed as configured: what the import wrote holds no plaintext.
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = rdb.Close() }()
	if redisHoldsPlaintext(t, ctx, rdb, prefix) {
		t.Error("an encrypted configuration stored values in clear")
	}
	// The check finds values stored without a key.
	plain := randomName("plain")
	cli(t, []string{dsn, "MEMVAULT_SCHEMA=" + plain}, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	if !redisHoldsPlaintext(t, ctx, rdb, plain) {
		t.Error("a plaintext configuration: values not found in clear (the check above proves nothing)")
	}

	refusedFeatures(t, env, "redis", true)

	// The store: a memory put through the CLI reads back, sealed in Redis
	// under the store's own prefix (never the checkpointer's keys).
	secret := "lives in Lisbon, " + randomName("marker")
	cli(t, env, "", "store", "put", "users", "alice", "k", `{"text":"`+secret+`"}`).must(t, 0)
	got := cli(t, env, "", "store", "get", "users", "alice", "k").must(t, 0).stdout
	if !strings.Contains(got, secret) {
		t.Errorf("store get = %q, want the value put", got)
	}
	if redisStoreHolds(t, ctx, rdb, prefix, secret) {
		t.Error("an encrypted configuration stored a memory in clear")
	}
	cli(t, []string{dsn, "MEMVAULT_SCHEMA=" + plain}, "", "store", "put", "users", "alice", "k", `{"text":"`+secret+`"}`).must(t, 0)
	if !redisStoreHolds(t, ctx, rdb, plain, secret) {
		t.Error("a plaintext configuration: the memory not found in clear (the check above proves nothing)")
	}
	wrongKey(t, []string{dsn, "MEMVAULT_SCHEMA=" + prefix})

	// A server that does not answer is reported, not waited on for ever.
	r := cli(t, []string{"MEMVAULT_DSN=redis://127.0.0.1:1/0"}, "", "threads", "list").must(t, 1)
	if !strings.Contains(r.stderr, "redisvault: MEMVAULT_DSN redis://127.0.0.1:1/0") {
		t.Errorf("unreachable server: %q", r.stderr)
	}
}

// TestBenchNoSQL runs a tiny `bench checkpointer` on Redis and on MongoDB,
// selected by the DSN's scheme: JSON rows of the raw baseline and the
// library's two modes for each operation asked, at concurrency 1 and 2;
// on MongoDB each row counts the commands an operation sent, on Redis its
// round trips and the server's CPU time and bytes received.
func TestBenchNoSQL(t *testing.T) {
	redisDSN := "redis://" + redistest.StartT(t, redistest.Options{Version: 8}).Addr + "/0"
	for name, c := range map[string]struct {
		dsn, raw string
		ops      string
	}{
		"redis": {redisDSN, "raw-redis", "get_tuple,list10,get_messages_50"},
		// FerretDB (SQLite) takes ~0.3 s per operation here: no seeded reads.
		"mongodb": {startMongo(t), "raw-mongo", "put,put_steady,put_writes"},
	} {
		t.Run(name, func(t *testing.T) {
			out := cli(t, nil, "", "bench", "checkpointer", "--dsn", c.dsn, "--ops", c.ops, "--duration", "200ms", "--concurrency", "2", "--json").must(t, 0).stdout
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if !strings.HasPrefix(lines[0], `{"cluster":`) {
				t.Fatalf("first line %q, want the server's settings", lines[0])
			}
			got := map[string]bool{}
			for _, l := range lines[1:] {
				var r struct {
					Op, Mode    string
					Concurrency int
					OpsPerS     float64 `json:"ops_per_s"`
					CmdsPerOp   float64 `json:"cmds_per_op"`
					TripsPerOp  float64 `json:"round_trips_per_op"`
					ServerCPUus float64 `json:"server_cpu_us"`
					BytesIn     float64 `json:"bytes_in_per_op"`
				}
				if err := json.Unmarshal([]byte(l), &r); err != nil || r.OpsPerS <= 0 {
					t.Fatalf("row %q: %v", l, err)
				}
				if (name == "mongodb") != (r.CmdsPerOp >= 1) {
					t.Errorf("row %q: commands per operation %v", l, r.CmdsPerOp)
				}
				if (name == "redis") != (r.TripsPerOp >= 1 && r.ServerCPUus > 0 && r.BytesIn > 0) {
					t.Errorf("row %q: round trips %v, server CPU %v µs, %v bytes in per operation", l, r.TripsPerOp, r.ServerCPUus, r.BytesIn)
				}
				got[r.Op+"/"+r.Mode+"/"+string(rune('0'+r.Concurrency))] = true
			}
			for _, op := range strings.Split(c.ops, ",") {
				for _, mode := range []string{c.raw, "plaintext", "encrypted"} {
					for _, conc := range []string{"1", "2"} {
						if !got[op+"/"+mode+"/"+conc] {
							t.Errorf("no row %s %s at %s in flight:\n%s", op, mode, conc, out)
						}
					}
				}
			}
			if len(lines) != 1+len(got) || len(got) != 6*len(strings.Split(c.ops, ",")) { // 3 modes × 2 concurrencies
				t.Errorf("%d lines:\n%s", len(lines), out)
			}
		})
	}
	// Refused before anything runs: a backend that is not the DSN's, and
	// what the MongoDB and Redis benches do not run.
	for _, args := range [][]string{
		{"--backend", "mongodb"},
		{"--scale", "100"},
		{"--js", "interop/js"},
		{"--ops", "put_messages", "--workload", "nope"},
	} {
		r := cli(t, nil, "", append([]string{"bench", "checkpointer", "--dsn", redisDSN}, args...)...).must(t, 2)
		if r.stderr == "" {
			t.Errorf("%v: no message", args)
		}
	}
}

// TestRedisClusterBackend runs the thread commands on a real three-master
// Redis Cluster through a redis+cluster:// DSN seeded with one master and
// the others as ?addr=.
func TestRedisClusterBackend(t *testing.T) {
	c := redistest.StartCluster(t, 8)
	dsn := "MEMVAULT_DSN=redis+cluster://" + c.Addrs[0] + "?addr=" + strings.Join(c.Addrs[1:], "&addr=")
	threadsGolden(t, []string{dsn, "MEMVAULT_SCHEMA=" + randomName("cl"), "LANGGRAPH_AES_KEY=" + testKey})
	// Threads of many slots: they spread over the masters, and the
	// listing finds them all.
	env := []string{dsn, "MEMVAULT_SCHEMA=" + randomName("cl")}
	export, err := os.ReadFile("testdata/thread.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		all.WriteString(strings.ReplaceAll(string(export), `"golden-thread"`, `"t-`+id+`"`))
	}
	cli(t, env, all.String(), "threads", "import", "-").must(t, 0)
	out := cli(t, env, "", "threads", "list", "--json").must(t, 0).stdout
	if n := strings.Count(out, `"thread_id":"t-`); n != 7 {
		t.Fatalf("threads list found %d threads, want 7:\n%s", n, out)
	}
}

package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redisvault"
	"github.com/memvault/memvault/checkpointer"
)

// The checkpointer bench on MongoDB and Redis (--backend mongodb|redis):
// the library's savers (plaintext and encrypted, as vault.Open configures
// them) next to a raw baseline that does the same operations through the
// Go driver or go-redis without memvault, in the same alternating slices
// as on PostgreSQL. The classic operations (put, put_writes, get_tuple,
// get_tuple_by_id, list10 on a thread of 100 checkpoints) and the
// growing-messages workload (put_messages, and get_messages_50 and
// get_messages_200: reads of threads grown to 50 and 200 messages) both
// run unless --workload messages asks for the second alone.

// Backend names of the bench's MongoDB and Redis runs.
const (
	BackendMongoDB = "mongodb"
	BackendRedis   = "redis"
)

// nosqlBackend reports whether backend is MongoDB's or Redis's.
func nosqlBackend(backend string) bool { return backend == BackendMongoDB || backend == BackendRedis }

// classicOps are the classic bench's operations.
var classicOps = []string{"put", "put_steady", "put_writes", "get_tuple", "get_tuple_by_id", "list10"}

// checkNoSQL refuses what the MongoDB and Redis benches cannot run.
func (o CheckpointerOptions) checkNoSQL() error {
	if o.Scale > 0 {
		return optionf("--scale runs on postgres and sqlite, not --backend %s", o.Backend)
	}
	if o.JSDir != "" && o.Backend != BackendMongoDB {
		return optionf("--js measures JS LangGraph's PostgresSaver (on MongoDB its MongoDBSaver): not with --backend %s", o.Backend)
	}
	if o.Workload != "" && o.Workload != "messages" {
		return optionf("--workload: %q (want messages)", o.Workload)
	}
	known := []string{"put_messages", "get_messages_50", "get_messages_200"}
	if o.Workload == "" {
		known = append(slices.Clone(classicOps), known...)
	}
	return o.params().checkOps(known...)
}

// benchNoSQL runs the checkpointer bench on MongoDB or Redis.
func benchNoSQL(ctx context.Context, out io.Writer, o CheckpointerOptions) error {
	bf := o.params()
	var be *shapeBackend
	var err error
	var js *mongoJS
	if o.Backend == BackendMongoDB {
		var run string
		be, run, err = mongoShapeBackend(ctx, o.DSN, bf.concurrency)
		if o.JSDir != "" {
			js = &mongoJS{dir: o.JSDir, uri: o.DSN, run: run}
		}
	} else {
		be, err = redisShapeBackend(ctx, o.DSN)
	}
	if err != nil {
		return err
	}
	defer be.close()
	p := &benchPrinter{out: out, json: o.JSON, cmds: o.Backend == BackendMongoDB || be.trips, trips: be.trips, server: be.probe != nil}
	if be.probe != nil {
		ctx = context.WithValue(ctx, serverProbeKey{}, be.probe)
	}
	if !o.JSON {
		fmt.Fprintf(out, "checkpointer bench on %s: %s per row, concurrency 1 and %d\n", be.name, bf.duration, bf.concurrency)
	}
	if err := p.settings(be.settings); err != nil {
		return err
	}
	if o.Workload == "" && slices.ContainsFunc(classicOps, bf.wants) {
		if err := benchClassicEnv(ctx, p, be, bf, js); err != nil {
			return err
		}
	}
	if slices.ContainsFunc([]string{"put_messages", "get_messages_50", "get_messages_200"}, bf.wants) {
		var startJS messagesJS
		if js != nil {
			startJS = func(ctx context.Context, _ *cpEnv, f msgFixture) (*jsBench, error) {
				return js.startMessages(ctx, bf.concurrency, f)
			}
		}
		return benchMessages(ctx, p, be, bf, startJS)
	}
	return nil
}

// mongoJS is where the JS column of the MongoDB bench runs: node on
// dir/bench.mjs (backends/mongodb/mongosaver/testdata/js, with its
// node_modules), JS LangGraph's MongoDBSaver on the server at uri, in the
// database of the workload's environment (run_cp for the classic
// operations, run_msg for the growing-messages workload: the same
// collections as memvault's and the raw baseline's, its threads named for
// its mode).
type mongoJS struct{ dir, uri, run string }

// db is the database of the environment labelled label.
func (m *mongoJS) db(label string) string { return m.run + "_" + label }

// start starts node on the environment labelled label; with fixture,
// node seeds its read thread with fixture's values.
func (m *mongoJS) start(ctx context.Context, label string, maxConc int, fixture map[string]any) (*jsBench, string, error) {
	j, err := startNode(ctx, m.dir)
	if err != nil {
		return nil, "", err
	}
	var ok struct {
		OK      bool   `json:"ok"`
		Version string `json:"version"`
	}
	// The URI travels on stdin, not in argv: it may hold a password.
	if err := j.call(map[string]any{"cmd": "init", "uri": m.uri, "db": m.db(label), "max_conc": maxConc, "fixture": fixture}, &ok); err != nil {
		_ = j.Close()
		return nil, "", err
	}
	return j, ok.Version, nil
}

// startMessages starts node for the growing-messages workload: JS's
// MongoDBSaver seeds its threads of 50 and messagesSteps steps with f's
// messages.
func (m *mongoJS) startMessages(ctx context.Context, maxConc int, f msgFixture) (*jsBench, error) {
	j, _, err := m.start(ctx, "msg", maxConc, nil)
	if err != nil {
		return nil, err
	}
	var ok struct {
		OK bool `json:"ok"`
	}
	init := map[string]any{"cmd": "init_messages", "steps": messagesSteps,
		"fixture": map[string]any{"messages": f.msgs, "context": f.context, "summary": f.summary}}
	if err := j.call(init, &ok); err != nil {
		_ = j.Close()
		return nil, err
	}
	return j, nil
}

// benchClassicEnv is the classic bench (benchCheckpointer's operations)
// on an environment of be: a thread of 100 checkpoints with 3 writes each
// per mode for the reads, seeded when a read is asked for; with js, JS
// LangGraph's MongoDBSaver in a column of its own.
func benchClassicEnv(ctx context.Context, p *benchPrinter, be *shapeBackend, bf params, js *mongoJS) error {
	modes := []string{"plaintext", "encrypted"}
	env, err := be.open(ctx, "cp", modes)
	if err != nil {
		return err
	}
	defer func() { env.close() }() // addAudited extends it
	if env.path != "" {
		// SQLite: the audited column (its trail in the data's file), as
		// vault.Open keeps one; MongoDB and Redis have no audit table.
		if err := addAudited(ctx, env); err != nil {
			return err
		}
		modes = append(modes, auditedMode)
	}
	modes = append([]string{env.rawMode}, modes...)
	fx := newCPFixture()
	base := idBase()
	putSeq, writesSeq := map[string]*atomic.Int64{}, map[string]*atomic.Int64{}
	steady := map[string]*growingThreads{}
	for _, m := range modes {
		steady[m] = &growingThreads{}
		putSeq[m], writesSeq[m] = &atomic.Int64{}, &atomic.Int64{}
	}
	readIDs := map[string][]string{}
	reads := slices.ContainsFunc([]string{"get_tuple", "get_tuple_by_id", "list10"}, bf.wants)
	for _, mode := range modes {
		if !reads {
			break // no read thread to seed
		}
		ids, err := seedReadThread(ctx, mode, env.rawMode, env.savers, env.raw, fx)
		if err != nil {
			return fmt.Errorf("seed read-%s: %w", mode, err)
		}
		readIDs[mode] = ids
	}
	ops := []namedOp{
		{"put", func(mode string) benchOp {
			seq := putSeq[mode]
			return func(ctx context.Context, _ int64) error {
				// Numbered across the row's slices (measure numbers each
				// slice from 1): a thread's versions keep growing, as a
				// graph's do, instead of repeating ones stored already
				// (which a saver keeps the first value of).
				i := seq.Add(1)
				thread := fmt.Sprintf("put-%s-%d", mode, i%64)
				vers := benchVersions(i)
				cp := fx.checkpoint(int(i), vers)
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				md := checkpointer.Metadata{"source": "loop", "step": i, "run_id": "bench"}
				if mode == env.rawMode {
					return env.raw.putWithParent(ctx, thread, "", cp, md, nv)
				}
				_, err := env.savers[mode].Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, nv)
				return err
			}
		}},
		{"put_steady", func(mode string) benchOp {
			g := steady[mode]
			return func(ctx context.Context, _ int64) error {
				// A steady writer: one thread per operation in flight,
				// each written step after step on the one before, as a
				// graph run writes its thread (put rotates over 64 threads,
				// each put without a parent).
				t := g.take()
				defer g.put(t)
				n := g.seq.Add(1) - 1
				thread := fmt.Sprintf("steady-%s-%d", mode, t.k)
				vers := benchVersions(int64(t.step))
				cp := fx.checkpoint(t.step, vers)
				cp.ID = benchID(base, n, t.step)
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				parent := ""
				if t.step > 0 {
					parent = benchID(base, t.last, t.step-1)
				} else {
					nv = vers
				}
				md := checkpointer.Metadata{"source": "loop", "step": t.step, "run_id": "bench"}
				var err error
				if mode == env.rawMode {
					err = env.raw.putWithParent(ctx, thread, parent, cp, md, nv)
				} else {
					_, err = env.savers[mode].Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, nv)
				}
				if err == nil {
					t.last, t.step = n, t.step+1
				}
				return err
			}
		}},
		{"put_writes", func(mode string) benchOp {
			seq := writesSeq[mode]
			return func(ctx context.Context, _ int64) error {
				// Tasks numbered across the row's slices (see
				// benchCheckpointer's put_writes): numbered by slice,
				// later slices wrote nothing.
				i := seq.Add(1)
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("w-%s-%d", mode, i%64), CheckpointID: "1f0c0000-0000-6000-8000-000000000000"}
				ws := []checkpointer.Write{{Channel: "messages", Value: fx.values["messages"]}, {Channel: "scratch", Value: fx.values["scratch"]}, {Channel: "summary", Value: fx.values["summary"]}}
				task := fmt.Sprintf("task-%d", i)
				if mode == env.rawMode {
					return env.raw.putWrites(ctx, cfg, ws, task)
				}
				return env.savers[mode].PutWrites(ctx, cfg, ws, task, "")
			}
		}},
		{"get_tuple", func(mode string) benchOp {
			return func(ctx context.Context, _ int64) error { return env.getLatest(ctx, mode, "read-"+mode, "") }
		}},
		{"get_tuple_by_id", func(mode string) benchOp {
			return func(ctx context.Context, i int64) error {
				ids := readIDs[mode]
				return env.getLatest(ctx, mode, "read-"+mode, ids[int(i)%len(ids)])
			}
		}},
		{"list10", func(mode string) benchOp {
			return func(ctx context.Context, _ int64) error { return env.list(ctx, mode, "read-"+mode, 10) }
		}},
	}
	var external map[string]sliceRunner
	if js != nil {
		j, version, err := js.start(ctx, "cp", bf.concurrency, fx.values)
		if err != nil {
			return err
		}
		defer j.Close()
		if !p.json {
			fmt.Fprintf(p.out, "%s: JS LangGraph's MongoDBSaver %s (node), database %s, its own threads\n", jsMode, version, js.db("cp"))
		}
		modes = append(modes, jsMode)
		external = map[string]sliceRunner{jsMode: j.run}
	}
	if err := p.compareOps(ctx, "checkpointer", ops, modes, bf, external); err != nil {
		return err
	}
	p.summary(env.rawMode)
	p.rows = nil
	return nil
}

// randomSuffix names a bench's database or key prefix.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// mongoShapeBackend opens environments on MongoDB: each one a database of
// its own (memvault_bench_<random>_<label>), dropped by its close. The
// library's savers are as vault.Open makes them (leases on, integer
// versions); the raw baseline writes the same collections.
// It also returns the prefix of the environments' databases (an
// environment labelled l is in database prefix_l).
func mongoShapeBackend(ctx context.Context, dsn string, conc int) (*shapeBackend, string, error) {
	// Every command an operation sends is counted in its slice (the
	// CMDS/OP column); the leases' background renewals run on contexts
	// of their own and are not.
	mon := &event.CommandMonitor{Started: func(ctx context.Context, _ *event.CommandStartedEvent) { countCmd(ctx) }}
	client, err := mongo.Connect(options.Client().ApplyURI(dsn).SetMaxPoolSize(uint64(max(conc*2, 8))).SetMonitor(mon))
	if err != nil {
		return nil, "", optionf("--dsn: %v", err)
	}
	disconnect := func() {
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = client.Disconnect(c)
	}
	var info bson.M
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		disconnect()
		return nil, "", fmt.Errorf("mongodb buildInfo: %w", err)
	}
	settings := [][2]string{{"version", fmt.Sprint(info["version"])}}
	if fe, ok := info["ferretdb"].(bson.M); ok {
		settings = append(settings, [2]string{"ferretdb", fmt.Sprint(fe["version"])})
	} else if fe, ok := info["ferretdbVersion"]; ok {
		settings = append(settings, [2]string{"ferretdb", fmt.Sprint(fe)})
	}
	wc := "server default"
	if c := options.Client().ApplyURI(dsn); c.WriteConcern != nil {
		wc = fmt.Sprintf("w=%v journal=%v", c.WriteConcern.W, c.WriteConcern.Journal)
	}
	settings = append(settings, [2]string{"write_concern", wc})
	sers, err := benchSerializers()
	if err != nil {
		disconnect()
		return nil, "", err
	}
	run := "memvault_bench_" + randomSuffix()
	be := &shapeBackend{name: "MongoDB (database " + run + "_*)", settings: settings, close: disconnect}
	be.open = func(ctx context.Context, label string, modes []string) (*cpEnv, error) {
		db := client.Database(run + "_" + label)
		drop := func() {
			c, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = db.Drop(c)
		}
		env := &cpEnv{savers: map[string]checkpointer.Saver{}, raw: &rawMongo{cps: db.Collection("checkpoints"), writes: db.Collection("checkpoint_writes")},
			rawMode: "raw-mongo", stats: func(context.Context) error { return nil }}
		for i, mode := range modes {
			s, err := mongosaver.New(db, mongosaver.Options{Serde: sers[mode]})
			if err == nil && i == 0 {
				err = s.Setup(ctx)
			}
			if err != nil {
				drop()
				return nil, err
			}
			env.savers[mode] = s
		}
		env.close = func() {
			for _, s := range env.savers {
				_ = s.(*mongosaver.Saver).Close()
			}
			drop()
		}
		return env, nil
	}
	return be, run, nil
}

// rawMongo is the MongoDB baseline: the documents of Python's
// MongoDBSaver layout (the checkpoint, values inline, as one JSON binary;
// metadata as a plain document; one document per write) written and
// read with the Go driver, values encoded and decoded with encoding/json.
type rawMongo struct {
	cps, writes *mongo.Collection
}

func (r *rawMongo) putWithParent(ctx context.Context, thread, parent string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, _ map[string]string) error {
	doc, err := json.Marshal(map[string]any{"v": cp.V, "id": cp.ID, "ts": cp.TS, "channel_values": cp.ChannelValues,
		"channel_versions": cp.ChannelVersions, "versions_seen": cp.VersionsSeen, "updated_channels": cp.UpdatedChannels})
	if err != nil {
		return err
	}
	meta := bson.M{}
	for k, v := range md {
		meta[k] = v
	}
	filter := bson.D{{Key: "thread_id", Value: thread}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: cp.ID}}
	set := bson.D{{Key: "parent_checkpoint_id", Value: parent}, {Key: "type", Value: "json"},
		{Key: "checkpoint", Value: bson.Binary{Data: doc}}, {Key: "metadata", Value: meta}}
	_, err = r.cps.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}}, options.UpdateOne().SetUpsert(true))
	return err
}

func (r *rawMongo) putWrites(ctx context.Context, cfg checkpointer.Config, ws []checkpointer.Write, task string) error {
	models := make([]mongo.WriteModel, 0, len(ws))
	for i, w := range ws {
		b, err := json.Marshal(w.Value)
		if err != nil {
			return err
		}
		filter := bson.D{{Key: "thread_id", Value: cfg.ThreadID}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: cfg.CheckpointID},
			{Key: "task_id", Value: task}, {Key: "idx", Value: i}}
		set := bson.D{{Key: "channel", Value: w.Channel}, {Key: "type", Value: "json"}, {Key: "value", Value: bson.Binary{Data: b}}}
		models = append(models, mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(bson.D{{Key: "$set", Value: set}}).SetUpsert(true))
	}
	_, err := r.writes.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	return err
}

// rawCkptDoc and rawWriteDoc are the fields the baseline reads.
type rawCkptDoc struct {
	ID         string `bson:"checkpoint_id"`
	Parent     string `bson:"parent_checkpoint_id"`
	Checkpoint []byte `bson:"checkpoint"`
	Metadata   bson.M `bson:"metadata"`
}

type rawWriteDoc struct {
	ID    string `bson:"checkpoint_id"`
	Task  string `bson:"task_id"`
	Value []byte `bson:"value"`
}

// read decodes checkpoints and the writes of their ids as an application
// must: the values, not the bytes.
func (r *rawMongo) read(ctx context.Context, thread string, cps []rawCkptDoc) error {
	ids := make([]string, len(cps))
	for i, c := range cps {
		var d map[string]any
		if err := json.Unmarshal(c.Checkpoint, &d); err != nil {
			return err
		}
		ids[i] = c.ID
	}
	// One checkpoint's writes by equality, as Python's MongoDBSaver asks
	// for them (FerretDB hands equality filters to its backend; with $in
	// it decodes every write of the thread itself).
	var idFilter any = bson.D{{Key: "$in", Value: ids}}
	if len(ids) == 1 {
		idFilter = ids[0]
	}
	filter := bson.D{{Key: "thread_id", Value: thread}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: idFilter}}
	cur, err := r.writes.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "checkpoint_id", Value: -1}, {Key: "task_id", Value: 1}, {Key: "idx", Value: 1}}))
	if err != nil {
		return err
	}
	var ws []rawWriteDoc
	if err := cur.All(ctx, &ws); err != nil {
		return err
	}
	for _, w := range ws {
		var v any
		if err := json.Unmarshal(w.Value, &v); err != nil {
			return err
		}
	}
	return nil
}

func (r *rawMongo) getTuple(ctx context.Context, thread, id string) error {
	filter := bson.D{{Key: "thread_id", Value: thread}, {Key: "checkpoint_ns", Value: ""}}
	opt := options.FindOne()
	if id != "" {
		filter = append(filter, bson.E{Key: "checkpoint_id", Value: id})
	} else {
		opt.SetSort(bson.D{{Key: "checkpoint_id", Value: -1}})
	}
	var c rawCkptDoc
	if err := r.cps.FindOne(ctx, filter, opt).Decode(&c); err != nil {
		return fmt.Errorf("raw get: %w", err)
	}
	return r.read(ctx, thread, []rawCkptDoc{c})
}

func (r *rawMongo) list(ctx context.Context, thread string, limit int) error {
	filter := bson.D{{Key: "thread_id", Value: thread}, {Key: "checkpoint_ns", Value: ""}}
	cur, err := r.cps.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "checkpoint_id", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return err
	}
	var cps []rawCkptDoc
	if err := cur.All(ctx, &cps); err != nil {
		return err
	}
	if len(cps) != limit {
		return fmt.Errorf("raw list: %d checkpoints", len(cps))
	}
	return r.read(ctx, thread, cps)
}

// redisShapeBackend opens environments on Redis: each one under a key
// prefix of its own (memvault-bench-<random>-<label>), whose keys its close
// deletes. The raw baseline keys live under the prefix too, in the same
// one-slot-per-thread shape ({thread} hash tags).
func redisShapeBackend(ctx context.Context, dsn string) (*shapeBackend, error) {
	rdb, err := redisvault.Client(dsn)
	if err != nil {
		return nil, optionf("--dsn: %v", err)
	}
	info, err := rdb.Info(ctx, "server", "persistence").Result()
	if err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redis INFO: %w", err)
	}
	var settings [][2]string
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && slices.Contains([]string{"redis_version", "aof_enabled", "cluster_enabled"}, k) {
			settings = append(settings, [2]string{k, v})
		}
	}
	if v, err := rdb.ConfigGet(ctx, "appendfsync").Result(); err == nil {
		settings = append(settings, [2]string{"appendfsync", v["appendfsync"]})
	}
	sers, err := benchSerializers()
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	run := "memvault-bench-" + randomSuffix()
	be := &shapeBackend{name: "Redis (prefix " + run + "-*)", settings: settings, close: func() { _ = rdb.Close() }, trips: true}
	// Every round trip an operation makes is counted in its slice (a
	// pipeline or MULTI/EXEC is one); the savers' lease renewals run on
	// contexts of their own and are not.
	rdb.AddHook(tripHook{})
	if c, ok := rdb.(*redis.Client); ok {
		// On one server, its CPU time per operation: a cluster's INFO
		// would read one node of several.
		be.probe = func(ctx context.Context) (serverStats, error) { return redisServerStats(ctx, c) }
	}
	be.open = func(ctx context.Context, label string, modes []string) (*cpEnv, error) {
		prefix := run + "-" + label
		env := &cpEnv{savers: map[string]checkpointer.Saver{}, raw: &rawRedis{rdb: rdb, prefix: prefix + "-raw"},
			rawMode: "raw-redis", stats: func(context.Context) error { return nil }}
		for _, mode := range modes {
			s, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix, Serde: sers[mode]})
			if err != nil {
				return nil, err
			}
			env.savers[mode] = s
		}
		env.close = func() {
			for _, s := range env.savers {
				_ = s.(*redissaver.Saver).Close()
			}
			c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_ = deleteRedisPrefix(c, rdb, prefix)
		}
		return env, nil
	}
	return be, nil
}

// tripHook counts each command and each pipeline a Redis operation sends
// as one round trip (countCmd).
type tripHook struct{}

func (tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		countCmd(ctx)
		return next(ctx, cmd)
	}
}

func (tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		countCmd(ctx)
		return next(ctx, cmds)
	}
}

// redisServerStats reads the server's CPU time (INFO cpu: used_cpu_user
// and used_cpu_sys, every thread of the server, to the microsecond) and
// the bytes it received (INFO stats: total_net_input_bytes).
func redisServerStats(ctx context.Context, c *redis.Client) (serverStats, error) {
	info, err := c.Info(ctx, "cpu", "stats").Result()
	if err != nil {
		return serverStats{}, fmt.Errorf("redis INFO: %w", err)
	}
	var st serverStats
	var seen int
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_cpu_user", "used_cpu_sys":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return serverStats{}, fmt.Errorf("redis INFO %s: %q", k, v)
			}
			st.cpu += time.Duration(f * float64(time.Second))
			seen++
		case "total_net_input_bytes":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return serverStats{}, fmt.Errorf("redis INFO %s: %q", k, v)
			}
			st.bytesIn = n
			seen++
		}
	}
	if seen != 3 {
		return serverStats{}, fmt.Errorf("redis INFO: no CPU or network statistics")
	}
	return st, nil
}

// deleteRedisPrefix deletes every key that starts with prefix, on every
// master of a cluster.
func deleteRedisPrefix(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				if err := unlinkEach(ctx, c, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		return unlinkEach(ctx, c, batch)
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, del)
	}
	if c, ok := rdb.(*redis.Client); ok {
		return del(ctx, c)
	}
	return fmt.Errorf("redis client %T", rdb)
}

// unlinkEach unlinks keys one command each (in one pipeline), as keys of
// different slots may not share a command.
func unlinkEach(ctx context.Context, c *redis.Client, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, k)
		}
		return nil
	})
	return err
}

// rawRedis is the Redis baseline, through go-redis without memvault: a
// checkpoint is one JSON string (values inline) and a member of the
// thread's sorted set (ordered by id), a checkpoint's writes one hash;
// every key of a thread shares its {thread} hash tag. put is one
// MULTI/EXEC; get_tuple is the id's lookup (latest: one ZRANGE) and one
// pipeline of GET and HGETALL; list(10) one ZRANGE and one pipeline.
type rawRedis struct {
	rdb    redis.UniversalClient
	prefix string
}

func (r *rawRedis) key(thread, kind, id string) string {
	k := r.prefix + ":{" + thread + "}:" + kind
	if id != "" {
		k += ":" + id
	}
	return k
}

func (r *rawRedis) putWithParent(ctx context.Context, thread, parent string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, _ map[string]string) error {
	doc, err := json.Marshal(map[string]any{"v": cp.V, "id": cp.ID, "ts": cp.TS, "channel_values": cp.ChannelValues,
		"channel_versions": cp.ChannelVersions, "versions_seen": cp.VersionsSeen, "updated_channels": cp.UpdatedChannels,
		"parent_checkpoint_id": parent, "metadata": md})
	if err != nil {
		return err
	}
	_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.key(thread, "cp", cp.ID), doc, 0)
		p.ZAdd(ctx, r.key(thread, "idx", ""), redis.Z{Score: 0, Member: cp.ID})
		return nil
	})
	return err
}

func (r *rawRedis) putWrites(ctx context.Context, cfg checkpointer.Config, ws []checkpointer.Write, task string) error {
	fields := make([]any, 0, 2*len(ws))
	for i, w := range ws {
		b, err := json.Marshal(map[string]any{"channel": w.Channel, "value": w.Value})
		if err != nil {
			return err
		}
		fields = append(fields, fmt.Sprintf("%s\x00%d", task, i), b)
	}
	return r.rdb.HSet(ctx, r.key(cfg.ThreadID, "w", cfg.CheckpointID), fields...).Err()
}

// read fetches and decodes the checkpoints of ids and their writes, in
// one pipeline.
func (r *rawRedis) read(ctx context.Context, thread string, ids []string) error {
	cmds, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Get(ctx, r.key(thread, "cp", id))
			p.HGetAll(ctx, r.key(thread, "w", id))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := 0; i < len(cmds); i += 2 {
		b, err := cmds[i].(*redis.StringCmd).Bytes()
		if err != nil {
			return err
		}
		var d map[string]any
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		for _, w := range cmds[i+1].(*redis.MapStringStringCmd).Val() {
			var v any
			if err := json.Unmarshal([]byte(w), &v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *rawRedis) latest(ctx context.Context, thread string, n int) ([]string, error) {
	return r.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: r.key(thread, "idx", ""), Start: "+", Stop: "-", ByLex: true, Rev: true, Count: int64(n)}).Result()
}

func (r *rawRedis) getTuple(ctx context.Context, thread, id string) error {
	ids := []string{id}
	if id == "" {
		var err error
		if ids, err = r.latest(ctx, thread, 1); err != nil {
			return err
		}
		if len(ids) != 1 {
			return fmt.Errorf("raw get: no checkpoint in %s", thread)
		}
	}
	return r.read(ctx, thread, ids)
}

func (r *rawRedis) list(ctx context.Context, thread string, limit int) error {
	ids, err := r.latest(ctx, thread, limit)
	if err != nil {
		return err
	}
	if len(ids) != limit {
		return fmt.Errorf("raw list: %d checkpoints", len(ids))
	}
	return r.read(ctx, thread, ids)
}

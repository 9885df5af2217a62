package mongovault

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// Name is vault.Handle.Backend for MongoDB databases.
const Name = "mongodb"

// DefaultDatabase is the database when neither Config.Schema nor the URI
// names one: Python MongoDBSaver's default.
const DefaultDatabase = "checkpointing_db"

// Schemes are the URI schemes registered for MongoDB.
var Schemes = []string{"mongodb", "mongodb+srv"}

// Backend is what this package registers.
// Subjects: the saver and the store drain the writes of every process for
// an erasure (mongosaver.Saver.DrainWrites, mongostore.Store.DrainWrites).
// Audit: the database's id and the mark that its audit trail began are
// documents of memvault_meta (auditMeta).
var Backend = vault.Backend{Name: Name, Open: open, Subjects: true, Audit: true}

func init() {
	for _, s := range Schemes {
		vault.RegisterBackend(s, Backend)
	}
}

// TTLIndexParam is the URI parameter of memvault's own
// ("mongodb://host/db?memvault_ttl_index=true") that sets the store's
// mongostore.Options.TTLIndex: with a TTL (MEMVAULT_TTL_DEFAULT) the store
// also asks the server for a TTL index on expired items. A server that
// refuses it (FerretDB v1) leaves the store without it, saying why in a
// warning; the sweeper deletes expired items either way. The parameter is
// removed before the URI reaches the driver.
const TTLIndexParam = "memvault_ttl_index"

// ErrURI is wrapped by the error of a MongoDB URI whose memvault parameter
// (TTLIndexParam) is not a boolean.
var ErrURI = errors.New("mongovault: bad MongoDB URI parameter")

// dsnParams are memvault's own URI parameters.
type dsnParams struct {
	ttlIndex   bool          // TTLIndexParam
	eraseLease time.Duration // EraseLeaseParam; DefaultEraseLease when absent
}

// splitDSN returns dsn without memvault's parameters, for the driver, and
// what they asked for. It edits the query string as text: a MongoDB URI
// may list several hosts, which net/url does not parse.
func splitDSN(dsn string) (string, dsnParams, error) {
	p := dsnParams{eraseLease: DefaultEraseLease}
	base, query, ok := strings.Cut(dsn, "?")
	if !ok {
		return dsn, p, nil
	}
	var kept []string
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.EqualFold(k, TTLIndexParam):
			b, err := strconv.ParseBool(v)
			if err != nil {
				return "", p, fmt.Errorf("%w: %s=%q: want true or false", ErrURI, TTLIndexParam, v)
			}
			p.ttlIndex = b
		case strings.EqualFold(k, EraseLeaseParam):
			d, err := time.ParseDuration(v)
			if err != nil || d < 100*time.Millisecond || d > time.Hour {
				return "", p, fmt.Errorf("%w: %s=%q: want a duration from 100ms to 1h (such as 30s)", ErrURI, EraseLeaseParam, v)
			}
			p.eraseLease = d
		default:
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return base, p, nil
	}
	return base + "?" + strings.Join(kept, "&"), p, nil
}

// Database returns the database c names: c.Schema, else the URI's, else
// DefaultDatabase.
func Database(c config.Config) (string, error) {
	if c.Schema != "" {
		if err := checkDatabaseName(c.Schema, "MEMVAULT_SCHEMA"); err != nil {
			return "", err
		}
		return c.Schema, nil
	}
	dsn, _, err := splitDSN(c.DSN)
	if err != nil {
		return "", err
	}
	cs, err := connstring.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("mongovault: MEMVAULT_DSN %s: %w", vault.RedactDSN(c.DSN), err)
	}
	name := cmp.Or(cs.Database, DefaultDatabase)
	if err := checkDatabaseName(name, "the database of MEMVAULT_DSN "+vault.RedactDSN(c.DSN)); err != nil {
		return "", err
	}
	return name, nil
}

// checkDatabaseName refuses a name MongoDB refuses as a database's on
// every platform, when the settings are read rather than at the first
// command: a URI such as mongodb://h//agents names "/agents". The
// characters only a Windows server refuses (* < > : | ?) are left to it.
func checkDatabaseName(name, what string) error {
	if len(name) > 63 {
		return fmt.Errorf("mongovault: %s: a database name of %d bytes (MongoDB takes at most 63)", what, len(name))
	}
	if i := strings.IndexAny(name, "/\\. \"$\x00"); i >= 0 {
		return fmt.Errorf("mongovault: %s: database name %q holds %q, which MongoDB refuses in a database name", what, name, name[i])
	}
	return nil
}

// pingTimeout bounds the first round trip when ctx has no deadline: an
// unreachable server is reported instead of waiting for ever.
const pingTimeout = 30 * time.Second

func open(ctx context.Context, c config.Config, o vault.BackendOptions) (*vault.BackendConn, error) {
	name, err := Database(c)
	if err != nil {
		return nil, err
	}
	dsn, params, err := splitDSN(c.DSN)
	if err != nil {
		return nil, err
	}
	client, err := mongo.Connect(options.Client().ApplyURI(dsn))
	if err != nil {
		return nil, fmt.Errorf("mongovault: MEMVAULT_DSN %s: %w", vault.RedactDSN(c.DSN), err)
	}
	closeClient := func() error {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return client.Disconnect(cctx)
	}
	ok := false
	defer func() {
		if !ok {
			_ = closeClient()
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	err = client.Ping(pctx, nil)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("mongovault: MEMVAULT_DSN %s: %w", vault.RedactDSN(c.DSN), err)
	}
	db := client.Database(name)
	if c.MustExist {
		names, err := db.ListCollectionNames(ctx, bson.D{})
		if err != nil {
			return nil, fmt.Errorf("mongovault: list the collections of %q: %w", name, err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%w: MongoDB database %q has no collections (MEMVAULT_SCHEMA or the URI's database)", vault.ErrNotFound, name)
		}
	}
	style := checkpointer.VersionInt // what Python's and JS's MongoDBSaver write
	if o.VersionsSet {
		style = o.Versions
	}
	sv, err := mongosaver.New(db, mongosaver.Options{Serde: o.Serde, StringVersions: style == checkpointer.VersionString,
		Retention: o.Retention, SweepInterval: o.RetentionSweepInterval})
	if err != nil {
		return nil, err
	}
	if err := sv.Setup(ctx); err != nil {
		_ = sv.Close()
		return nil, err
	}
	// The marks are read from the primary whatever readPreference the
	// URI sets: the erasure guard's argument (mongosaver's doc, "The
	// erasure guard") needs a write's second look at the mark to see
	// every mark written before it, which a secondary behind the primary
	// does not; so do the intents and the erasure lock's lease.
	meta := db.Collection(metaCol, options.Collection().SetReadPreference(readpref.Primary()))
	am := auditMeta{meta}
	conn := &vault.BackendConn{
		Saver:       sv,
		Close:       closeClient,
		Migrations:  func(ctx context.Context) ([]vault.Migration, error) { return migrations(ctx, db) },
		AuditMeta:   am,
		DatabaseID:  am.databaseID,
		ErasureLock: newEraseLock(db, meta, params.eraseLease),
	}
	conn.Store = func(ctx context.Context, so vault.StoreOptions) (store.Store, error) {
		return mongostore.New(ctx, db, mongostore.Options{Serde: so.Serde, Index: so.Index, TTL: so.TTL, TTLIndex: params.ttlIndex})
	}
	ok = true
	return conn, nil
}

// migrations lists the indexes of every collection of db (_id's left
// out): MongoDB has no migration versions, its set-up is its indexes.
func migrations(ctx context.Context, db *mongo.Database) ([]vault.Migration, error) {
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("mongovault: %w", err)
	}
	slices.Sort(names)
	var out []vault.Migration
	for _, n := range names {
		specs, err := db.Collection(n).Indexes().ListSpecifications(ctx)
		if err != nil {
			return nil, fmt.Errorf("mongovault: indexes of %s: %w", n, err)
		}
		m := vault.Migration{Table: n}
		for _, s := range specs {
			if s.Name != "_id_" {
				m.Indexes = append(m.Indexes, s.Name)
			}
		}
		slices.Sort(m.Indexes)
		out = append(out, m)
	}
	return out, nil
}

// metaCol holds memvault's facts about the database: its id, whether its
// audit trail began and what was configured on it (marks) — the
// memvault_meta table of SQLite and PostgreSQL.
const metaCol = "memvault_meta"

// auditMeta is audit.Meta, the database id and the marks, on metaCol.
type auditMeta struct{ coll *mongo.Collection }

const (
	idDoc    = "database_id"
	chainDoc = "audit_chain_began"
)

// ChainBegan implements audit.Meta; it only reads.
func (m auditMeta) ChainBegan(ctx context.Context) (bool, error) {
	n, err := m.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: chainDoc}})
	if err != nil {
		return false, fmt.Errorf("mongovault: audit mark: %w", err)
	}
	return n > 0, nil
}

// MarkChainBegan implements audit.Meta: an upsert, idempotent.
func (m auditMeta) MarkChainBegan(ctx context.Context) error {
	_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: chainDoc}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "at", Value: time.Now()}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("mongovault: audit mark: %w", err)
	}
	return nil
}

// markPrefix begins the _id of a mark's document (Marked, Mark).
const markPrefix = "mark:"

// Marked tells whether the database holds the mark name: what was
// configured on it (per-subject keys), as memvault_meta's marks on SQLite
// and PostgreSQL; vault.Open refuses a configuration without it.
func (m auditMeta) Marked(ctx context.Context, name string) (bool, error) {
	_, ok, err := m.MarkValue(ctx, name)
	return ok, err
}

// MarkValue returns the value of the mark name, and whether the database
// holds it.
func (m auditMeta) MarkValue(ctx context.Context, name string) (string, bool, error) {
	var doc struct {
		Value string `bson:"value"`
	}
	err := m.coll.FindOne(ctx, bson.D{{Key: "_id", Value: markPrefix + name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("mongovault: mark %q: %w", name, err)
	}
	return doc.Value, true, nil
}

// Mark records the mark name with value, once: a mark is never changed
// or removed by memvault (an upsert that sets only on insert).
func (m auditMeta) Mark(ctx context.Context, name, value string) error {
	_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: markPrefix + name}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "value", Value: value}, {Key: "at", Value: time.Now()}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) { // two processes marking at once: one insert wins
		return fmt.Errorf("mongovault: mark %q: %w", name, err)
	}
	return nil
}

// AdvanceMark records the count n under the mark name, unless the mark
// holds a greater count already: a mark that only grows (the key table's
// erasures, see vault).
func (m auditMeta) AdvanceMark(ctx context.Context, name string, n int64) error {
	advance := func() error {
		_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: markPrefix + name}},
			bson.D{{Key: "$max", Value: bson.D{{Key: "count", Value: n}}}, {Key: "$set", Value: bson.D{{Key: "at", Value: time.Now()}}}},
			options.UpdateOne().SetUpsert(true))
		return err
	}
	err := advance()
	if mongo.IsDuplicateKeyError(err) { // another process inserted it first: $max on its document now
		err = advance()
	}
	if err != nil {
		return fmt.Errorf("mongovault: mark %q: %w", name, err)
	}
	return nil
}

// MarkErasure records n, the number of an erasure of subject that begins,
// under the mark erased_subject:<subject> (unless it holds a greater
// one): the erasure guard's record (see vault), which every write of the
// subject checks (ErasedPast).
func (m auditMeta) MarkErasure(ctx context.Context, subject string, n int64) error {
	return m.AdvanceMark(ctx, keys.ErasedSubjectMark(subject), n)
}

// ErasedPast reports whether the mark erased_subject:<subject> holds a
// number greater than known, the count of erasures of the writer's key
// table (keys.ErasureGuard). MongoDB has no transaction to run it in: the
// saver and the store run it before a write and again just after,
// deleting the write when the second check refuses it (mongosaver's doc,
// "The erasure guard").
func (m auditMeta) ErasedPast(ctx context.Context, subject string, known int64) (bool, error) {
	n, err := m.MarkCount(ctx, keys.ErasedSubjectMark(subject))
	return n > known, err
}

// MarkCount returns the count AdvanceMark recorded under the mark name; 0
// when there is none.
func (m auditMeta) MarkCount(ctx context.Context, name string) (int64, error) {
	var doc struct {
		Count bson.RawValue `bson:"count"`
	}
	err := m.coll.FindOne(ctx, bson.D{{Key: "_id", Value: markPrefix + name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("mongovault: mark %q: %w", name, err)
	}
	// An integer only: the driver would read a boolean false as 0, and
	// booleans sort above numbers, so $max would never move such a count
	// again — one write of {count: false} would turn the check off.
	if n, ok := doc.Count.Int64OK(); ok {
		return n, nil
	}
	if n, ok := doc.Count.Int32OK(); ok {
		return int64(n), nil
	}
	return 0, fmt.Errorf("mongovault: mark %q holds a %s, not an integer count", name, doc.Count.Type)
}

// databaseID returns the database's id, creating it once: of two
// processes creating it at once, the first insert wins and both read its
// id.
func (m auditMeta) databaseID(ctx context.Context) (string, error) {
	fresh := make([]byte, 16)
	_, _ = rand.Read(fresh)
	for attempt := 0; ; attempt++ {
		_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: idDoc}},
			bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "value", Value: hex.EncodeToString(fresh)}}}}, options.UpdateOne().SetUpsert(true))
		// Two upserts racing: the server refuses the second insert
		// (E11000); the id is there to read.
		if err != nil && (!mongo.IsDuplicateKeyError(err) || attempt == 3) {
			return "", fmt.Errorf("mongovault: database id: %w", err)
		}
		var doc struct {
			Value string `bson:"value"`
		}
		if err := m.coll.FindOne(ctx, bson.D{{Key: "_id", Value: idDoc}}).Decode(&doc); err == nil && doc.Value != "" {
			return doc.Value, nil
		} else if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return "", fmt.Errorf("mongovault: database id: %w", err)
		}
		if attempt == 3 {
			return "", fmt.Errorf("mongovault: database id: %s holds no id", metaCol)
		}
	}
}

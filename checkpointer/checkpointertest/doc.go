// Package checkpointertest is the conformance suite every checkpointer.Saver
// passes. A backend's test calls Run with a constructor:
//
//	func TestConformance(t *testing.T) {
//		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
//			s, err := memsaver.New(memsaver.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// newSaver is called once per test case and must return a saver over empty
// storage (a fresh database, schema or file): the list cases over all threads
// check exact results. The suite ports LangGraph's Python conformance suite
// (langgraph-checkpoint-conformance) and JS validation suite
// (@langchain/langgraph-checkpoint-validation): put, put_writes, get_tuple,
// list (including the full thread × namespace × limit × before × filter
// matrix, checked against an independent model), delete_thread, the
// optional capabilities (checkpointer.Pruner, checkpointer.Copier,
// checkpointer.RunDeleter; skipped when not implemented) and the v<4
// pending-sends migration, each for the root namespace and a child
// namespace. It adds concurrency, JSON-containment metadata filters, value
// kinds, unicode and NUL bytes, 8 MiB values, SQL metacharacters in names,
// identifiers at checkpointer.MaxIDBytes (every one of them at once, in
// incompressible multi-byte text: the widest index row a backend holds)
// and one byte over it (checkpointer.ErrIDTooLong on every write — Put,
// PutWrites, CopyThread's destination — nothing stored; reads and deletes
// accept it and find nothing), bad input and context cancellation.
//
// # Contract points the suite pins down
//
// Beyond LangGraph's suites, these behaviours are checked so that every
// backend agrees: List with a nil config lists every thread and namespace,
// and with a config lacking a thread id every thread of the config's
// namespace (JS LangGraph's behaviour); GetTuple and Put without a thread id,
// DeleteThread(""), and CopyThread with an empty id return
// checkpointer.ErrMissingThreadID; PutWrites without a checkpoint id returns
// checkpointer.ErrMissingCheckpointID; a failed Put or PutWrites stores
// nothing; a channel value or pending write holding a string that is not
// valid UTF-8 (nested, or as a map key) is refused with
// serde.ErrUnsupportedValue rather than stored changed, and so is a
// json.Number that is no JSON number or is beyond float64 ("1e400", which
// would read back as +Inf; jsonvaluetest.RefusedNumbers), refused in
// metadata with checkpointer.ErrInvalidMetadata, never quoted in the
// error; NaN and ±Inf float64 channel values and pending writes come back
// as themselves (metadata refuses them); an empty channel
// version is refused with checkpointer.ErrInvalidVersion (the rule thread
// file imports apply), any other text is a version; PutWrites upserts only when every write is to a special channel;
// pending writes come back ordered by (task id, idx); the latest checkpoint is
// the one with the greatest id, not the last one put; a v<4 checkpoint is
// migrated whatever backend stored it (the suite stores it with Put and V=1,
// so no backend-specific fixture is needed); an error from a cancelled
// context wraps context.Canceled; a checkpoint put again under its id keeps
// its first parent and a (channel, version) its first value (LangGraph's
// insert semantics); CopyThread copies every row of the source, writes
// whose checkpoint is not stored included, replacing the destination's
// rows with the same keys, re-sealed for the destination when encrypted.
// RunOptions, run apart with the backend's constructor, checks that an
// unknown VersionStyle and a negative retention policy are refused at
// construction (checkpointer.ErrInvalidVersionStyle,
// checkpointer.ErrInvalidPolicy).
//
// # Value model
//
// The Fidelity cases compare strictly (jsonvalue.Diff): metadata must come
// back in memvault's JSON value model (package jsonvalue) with NUL
// characters removed, and channel values and pending writes with the same
// numbers (int64, uint64, *big.Int, float64 that stays float64 when
// integral) plus []byte and time.Time, for every case of
// jsonvalue/jsonvaluetest. Other cases, which exercise behaviour rather than
// types, compare after normalising both sides (see Normalize and Equal):
// integers of any width equal int64, integral floats equal integers, maps
// with string keys become map[string]any, slices other than []byte become
// []any, a nil []byte equals an empty one, and times compare as instants.
package checkpointertest

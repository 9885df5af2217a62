// Package checkpointertest is the conformance suite every checkpointer.Saver
// passes. A backend's test calls Run with a constructor:
//
//	func TestConformance(t *testing.T) {
//		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
//			return memory.New(memory.Options{})
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
// bad input and context cancellation.
//
// # Value model
//
// Values come back through the saver's serializer, so the suite compares
// them after normalising both sides (see Normalize and Equal): integers of
// any width equal int64, integral floats equal integers (JSON cannot tell
// 1.0 from 1), maps with string keys become map[string]any, slices other than
// []byte become []any, a nil []byte equals an empty one, and times compare
// as instants. A JSON codec may return a time.Time as RFC 3339 text and a
// nested []byte as base64 text; both are accepted. Metadata is stored as
// plain JSON with NUL characters removed.
package checkpointertest

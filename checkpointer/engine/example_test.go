package engine_test

import (
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
)

// What a driver receives from the engine for a List: the call's
// coordinates as a DriverQuery. The driver fetches the rows it names, in
// key order; the engine keeps the rules (validation, decoding, filters
// the driver cannot run exactly).
func ExampleListQuery() {
	ns := ""
	q := engine.ListQuery(&checkpointer.Config{ThreadID: "t1", CheckpointNS: ns},
		checkpointer.ListOptions{Before: &checkpointer.Config{CheckpointID: "1ef-b"}, Limit: 2})
	fmt.Printf("thread %q ns %q before %q limit %d\n", q.Thread, *q.NS, q.Before, q.Limit)

	q = engine.ListQuery(&checkpointer.Config{ThreadID: "t1"}, checkpointer.ListOptions{AllNamespaces: true})
	fmt.Println("every namespace:", q.NS == nil)
	// Output:
	// thread "t1" ns "" before "1ef-b" limit 2
	// every namespace: true
}

// A SQL driver reading a checkpoint's value rows needs the channel
// versions its stored document names: DecodeDocument parses them once,
// and the driver hands the Document on (StoredCheckpoint.Decoded) so the
// engine does not parse it again.
func ExampleDecodeDocument() {
	doc := []byte(`{"v":4,"id":"1ef4f797-8335-6428-8001-8a1503f9b875","ts":"2026-01-02T03:04:05+00:00",
"channel_versions":{"messages":"00000000000000000000000000000002.0.5","user":"00000000000000000000000000000001.0.3"},
"versions_seen":{},"channel_values":{}}`)
	d, err := engine.DecodeDocument(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.V(), d.ChannelVersions()["messages"])

	_, err = engine.DecodeDocument([]byte(`{"v":4,"channel_versions":[1]}`))
	fmt.Println(err != nil)
	// Output:
	// 4 00000000000000000000000000000002.0.5
	// true
}

package interop_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memvault/memvault/serde"
)

// The package has no API; its tests compare values through their wire
// form. This example runs that comparison on one value without node or
// PostgreSQL: memvault's JSONPlus writes a LangChain message held by a Go
// program as the same (type, data) pair JS wrote for it (the first message
// of the fixture's js-graph thread, in testdata/js_rows.json), up to key
// order and number spelling, which sameJSON ignores and a changed value
// does not get past.
func Example() {
	const jsWrote = `{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],` +
		`"kwargs":{"id":"msg-1","content":"Bonjour ! J'ai été débité deux fois 🙁 — commande n°42 (注文)",` +
		`"additional_kwargs":{},"response_metadata":{}}}`
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return err.Error()
		}
		return v
	}

	msg := mvMessage("HumanMessage", "msg-1", "Bonjour ! J'ai été débité deux fois 🙁 — commande n°42 (注文)")
	typ, data, err := serde.JSONPlus{}.DumpsTyped(msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("type %s, same as JS: %q\n", typ, sameJSON("value", decode(data), decode([]byte(jsWrote))))

	fmt.Printf("%q\n", sameJSON("n", decode([]byte(`1e21`)), decode([]byte(`1000000000000000000000`))))
	edited := mvMessage("HumanMessage", "msg-1", "Bonjour")
	_, data, _ = serde.JSONPlus{}.DumpsTyped(edited)
	fmt.Println(sameJSON("value", decode(data), decode([]byte(jsWrote))) != "")
	// Output:
	// type json, same as JS: ""
	// ""
	// true
}

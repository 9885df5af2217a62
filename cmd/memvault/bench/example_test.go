package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/memvault/memvault/cmd/memvault/bench"
)

// The store bench on a temporary SQLite file, at a tiny shape, its JSON
// rows read back: the library's modes next to raw SQL, one at a time
// and two in flight. (The figures themselves vary from run to run.)
func ExampleRunStore() {
	var out bytes.Buffer
	err := bench.RunStore(context.Background(), &out, bench.StoreOptions{
		Options: bench.Options{Backend: "sqlite", Duration: 400 * time.Millisecond, Concurrency: 2, Ops: []string{"get"}, JSON: true},
		Items:   40,
		Dims:    24,
	})
	if err != nil {
		log.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r bench.Row
		if err := dec.Decode(&r); err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Suite, r.Op, r.Mode, r.Concurrency, r.OpsPerS > 0)
	}
	// Output:
	// store get raw-sql 1 true
	// store get plaintext 1 true
	// store get encrypted 1 true
	// store get raw-sql 2 true
	// store get plaintext 2 true
	// store get encrypted 2 true
}

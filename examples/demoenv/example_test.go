package demoenv_test

import (
	"fmt"

	"github.com/memvault/memvault/examples/demoenv"
)

// Examples always encrypt: without LANGGRAPH_AES_KEY they use the demo key.
func ExampleConfig() {
	cfg := demoenv.Config("/tmp/example.db")
	fmt.Println(cfg.DBPath, cfg.Keys)
	// Output: /tmp/example.db Keys{primary: set, previous: 0}
}

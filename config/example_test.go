package config_test

import (
	"fmt"
	"log"

	"github.com/memvault/memvault/config"
)

// FromLookup reads what FromEnv reads, from any source; DescribeKeys
// reports the keys without revealing them (what `memvault keys check`
// prints). vault.Open then wires the saver and the store.
func Example() {
	env := map[string]string{
		"MEMVAULT_DB":       "/var/lib/agent/agent.db",
		"LANGGRAPH_AES_KEY": "0123456789abcdef0123456789abcdef",
	}
	cfg, err := config.FromLookup(func(name string) (string, bool) { v, ok := env[name]; return v, ok })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.EffectiveEncryption(), cfg.Keys)
	r, err := config.DescribeKeys(cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Keys[0].Role, r.Keys[0].Bytes)

	// A bad value names the variable.
	env["MEMVAULT_ENCRYPTION"] = "rot13"
	_, err = config.FromLookup(func(name string) (string, bool) { v, ok := env[name]; return v, ok })
	fmt.Println(err != nil)
	// Output:
	// envelope Keys{primary: set, previous: 0}
	// primary 32
	// true
}

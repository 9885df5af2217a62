package main

// The MongoDB and Redis backends live in modules of their own (the core
// module does not depend on their clients); importing their wiring
// packages registers their URL schemes with vault.RegisterBackend, so that
// --dsn mongodb://… and --dsn redis://… (or MEMVAULT_DSN) open them.
import (
	_ "github.com/memvault/memvault/backends/mongodb/mongovault"
	_ "github.com/memvault/memvault/backends/redis/redisvault"
)

module github.com/memvault/memvault/cmd/memvault

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/memvault/memvault v0.0.0-00010101000000-000000000000
	github.com/memvault/memvault/backends/mongodb v0.0.0-00010101000000-000000000000
	github.com/memvault/memvault/backends/redis v0.0.0-00010101000000-000000000000
	github.com/memvault/memvault/inspector v0.0.0-00010101000000-000000000000
	github.com/pgvector/pgvector-go v0.3.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	go.mongodb.org/mongo-driver/v2 v2.10.0
	golang.org/x/term v0.47.0
	modernc.org/sqlite v1.61.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/xdg-go/scram v1.4.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

// The CLI is built from the library in the same repository (gopls does the
// same with x/tools); go.work at the root ties both modules for development.
replace github.com/memvault/memvault => ../..

// The inspector is a module of its own (its browser tests' dependencies stay
// out of the CLI's and the library's go.mod), in the same repository.
replace github.com/memvault/memvault/inspector => ../../inspector

// The MongoDB and Redis backends are modules of their own in the same
// repository (the library's go.mod does not gain their clients).
replace github.com/memvault/memvault/backends/mongodb => ../../backends/mongodb

replace github.com/memvault/memvault/backends/redis => ../../backends/redis

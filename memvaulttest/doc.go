// Package memvaulttest is the home of memvault's test kits: the packages
// below it give tests real parts (a throwaway PostgreSQL, a fixed test key,
// every backend for the adapters, a second process reading a SQLite file,
// rows JS LangGraph wrote). They are exported, not internal, because the
// repository's nested modules (the CLI, the adapters, the key providers,
// the examples) test with them too, and a module may not import another
// module's internal packages. They are for tests only: the keys in them
// are public, and they may change with memvault's own tests.
package memvaulttest

package main

import (
	"slices"
	"strings"
)

// knownVariables are the environment variables memvault reads: config's
// (README's configuration table; TestKnownVariablesCoverConfig keeps the
// two in step) and the CLI's own MEMVAULT_PRINCIPAL.
var knownVariables = []string{
	"MEMVAULT_DSN", "DATABASE_URL", "MEMVAULT_DB", "MEMVAULT_SCHEMA",
	"LANGGRAPH_AES_KEY", "LANGGRAPH_AES_KEY_PREVIOUS", "MEMVAULT_ENCRYPTION", "MEMVAULT_ALLOW_PLAINTEXT",
	"MEMVAULT_DANGEROUS_SKIP_KEY_CHECK", "MEMVAULT_DANGEROUSLY_ACCEPT_UNBOUND_AES",
	"MEMVAULT_TTL_DEFAULT", "MEMVAULT_TTL_REFRESH_ON_READ", "MEMVAULT_TTL_SWEEP_INTERVAL",
	"MEMVAULT_RETENTION_IDLE_TTL", "MEMVAULT_RETENTION_KEEP_LATEST", "MEMVAULT_RETENTION_SWEEP_INTERVAL",
	"MEMVAULT_DURABILITY", "MEMVAULT_GROUP_COMMIT", "MEMVAULT_SQLITE_FULL_SYNC",
	"MEMVAULT_EMBEDDINGS", "MEMVAULT_INDEX_FIELDS", "MEMVAULT_DISTANCE", "MEMVAULT_CACHE_SIZE", "MEMVAULT_EMBEDDING_CACHE_SIZE",
	"MEMVAULT_VERSIONS", "MEMVAULT_SUBJECT_THREAD_SEPARATOR", "MEMVAULT_SUBJECT_THREAD_METADATA", "MEMVAULT_SUBJECT_NAMESPACE",
	"MEMVAULT_KEY_TABLE", "MEMVAULT_KEY_DSN", "MEMVAULT_AUDIT", "MEMVAULT_AUDIT_TABLE",
	"MEMVAULT_PRINCIPAL",
}

// devPrefixes are the variables of memvault's own tests, benchmarks and
// install scripts (MEMVAULT_BENCH_ITEMS, MEMVAULT_REDIS8, …): never a
// user's typo.
var devPrefixes = []string{"MEMVAULT_BENCH_", "MEMVAULT_TEST_", "MEMVAULT_REDIS", "MEMVAULT_CHROMIUM", "MEMVAULT_CITUS_", "MEMVAULT_REQUIRE_", "MEMVAULT_ADK_"}

// envWarnings returns a warning for each variable of environ ("NAME=value")
// that looks meant for memvault but is not one it reads: any MEMVAULT_
// name it does not know, and a name one letter away from one it knows
// (LANGGRAPH_AES_KEYS, MEMVALT_DSN). Such a variable was ignored
// without a word, so a typo'd key ran in plaintext and a typo'd database
// path used ./memvault.db. Only names are printed, never values.
func envWarnings(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(knownVariables, name) || slices.ContainsFunc(devPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		best, dist := closestVariable(name)
		if !strings.HasPrefix(name, "MEMVAULT_") {
			// Another program's variable unless it is one letter away
			// from memvault's (LANGGRAPH_AES_KEYS, MEMVALT_DSN):
			// LANGGRAPH_API_KEY is not a typo of LANGGRAPH_AES_KEY.
			if dist > 1 {
				continue
			}
		} else if (strings.Contains(name, "KEY") || strings.Contains(name, "AES")) && (dist > 1 || !strings.Contains(best, "KEY")) {
			best = "LANGGRAPH_AES_KEY" // MEMVAULT_KEY, MEMVAULT_AES_KEY: the key
		} else if dist > 2 {
			best = ""
		}
		w := name + " is set, but memvault reads no such variable"
		if best != "" {
			w += " (did you mean " + best + "?)"
		}
		out = append(out, w+"; it is ignored")
	}
	return out
}

// closestVariable is the known variable nearest to name and its edit
// distance; a known name that starts with name ("MEMVAULT_DB_PATH" is not
// MEMVAULT_DB, but a name that extends a known one is most likely it)
// counts as near.
func closestVariable(name string) (string, int) {
	best, dist := "", len(name)+1
	for _, k := range knownVariables {
		d := editDistance(name, k)
		if strings.HasPrefix(name, k+"_") && d > 1 {
			d = 1 // MEMVAULT_DB_PATH: meant MEMVAULT_DB
		}
		if d < dist {
			best, dist = k, d
		}
	}
	return best, dist
}

// editDistance is the Levenshtein distance of two short names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

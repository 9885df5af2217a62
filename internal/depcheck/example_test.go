package depcheck

import "fmt"

// The rule TestNoModuleImportsAnotherModulesInternals applies to every
// import of every file: an import path with an internal element, owned by
// a repository module other than the importer's, is refused, although Go
// itself allows a nested module to import it. The package holds no code,
// so its Example runs the rule's own helpers (owner finds the longest
// module path that holds an import path) on a few imports of the CLI
// module.
func Example() {
	mods := []module{ // longest path first, as modules returns them
		{dir: "cmd/memvault", path: "github.com/memvault/memvault/cmd/memvault"},
		{dir: ".", path: "github.com/memvault/memvault"},
	}
	importer := "github.com/memvault/memvault/cmd/memvault"
	for _, ip := range []string{
		"github.com/memvault/memvault/vault",
		"github.com/memvault/memvault/internal/pgdb",
		"github.com/memvault/memvault/cmd/memvault/internal/ui",
		"golang.org/x/sys/internal/unsafeheader",
	} {
		o := owner(mods, ip)
		refused := hasInternal(ip) && o != "" && o != importer
		fmt.Printf("%s: owner %q, refused %v\n", ip, o, refused)
	}
	// Output:
	// github.com/memvault/memvault/vault: owner "github.com/memvault/memvault", refused false
	// github.com/memvault/memvault/internal/pgdb: owner "github.com/memvault/memvault", refused true
	// github.com/memvault/memvault/cmd/memvault/internal/ui: owner "github.com/memvault/memvault/cmd/memvault", refused false
	// golang.org/x/sys/internal/unsafeheader: owner "", refused false
}

package depcheck

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository's root: the library module's directory.
const repoRoot = "../.."

// module is one go.mod'd directory of the repository.
type module struct {
	dir, path string
}

// modules finds every go.mod under the repository root (skipping hidden
// directories, testdata and node_modules), longest module path first.
func modules(t *testing.T) []module {
	t.Helper()
	var mods []module
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != repoRoot && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
				mods = append(mods, module{dir: filepath.Dir(p), path: strings.Trim(strings.TrimSpace(rest), `"`)})
				return nil
			}
		}
		t.Fatalf("%s: no module line", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 2 {
		t.Fatalf("found %d modules under %s; the walk is broken", len(mods), repoRoot)
	}
	sort.Slice(mods, func(i, j int) bool { return len(mods[i].path) > len(mods[j].path) })
	return mods
}

func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || name == "vendor"
}

// owner returns the repository module that holds import path p, or "".
func owner(mods []module, p string) string {
	for _, m := range mods {
		if p == m.path || strings.HasPrefix(p, m.path+"/") {
			return m.path
		}
	}
	return ""
}

// hasInternal reports whether import path p names an internal package.
func hasInternal(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// importsOf returns, for every .go file (tests included) of the module in
// dir, not descending into nested modules, the file and its imports.
func importsOf(t *testing.T, dir string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module: checked on its own
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			out[p] = append(out[p], ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoModuleImportsAnotherModulesInternals: Go lets a nested module such
// as github.com/memvault/memvault/cmd/memvault import
// github.com/memvault/memvault/internal/..., since its import path is below
// the internal directory's parent, but the two are released apart: the
// nested module would then depend on code the library may change at any
// time. Every module uses the others' exported API only.
func TestNoModuleImportsAnotherModulesInternals(t *testing.T) {
	mods := modules(t)
	files := 0
	for _, m := range mods {
		for file, imps := range importsOf(t, m.dir) {
			files++
			for _, ip := range imps {
				if !hasInternal(ip) {
					continue
				}
				if o := owner(mods, ip); o != "" && o != m.path {
					t.Errorf("%s (module %s) imports %s, an internal package of module %s", file, m.path, ip, o)
				}
			}
		}
	}
	if files < 100 {
		t.Fatalf("checked only %d files; the walk is broken", files)
	}
}

package depcheck

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// seamPackages are the packages a driver in another module (MongoDB,
// Redis) programs against: every type their exported API names must be
// one such a driver can name too.
var seamPackages = []string{
	mod + "/store",
	mod + "/store/engine",
	mod + "/store/vecindex",
	mod + "/checkpointer",
	mod + "/checkpointer/engine",
}

// TestSeamNamesNoInternalType: the exported API of the driver seams names
// no type of an internal package. A driver in another module cannot
// implement an interface method whose parameter type it cannot name
// (engine.FenceTx once took an internal *binding.Fence), nor use a
// function whose result it cannot declare.
func TestSeamNamesNoInternalType(t *testing.T) {
	imp := exportImporter(t, seamPackages...)
	for _, path := range seamPackages {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		for _, bad := range internalNames(pkg) {
			t.Errorf("%s", bad)
		}
	}
}

// exportImporter returns an importer reading the export data the go
// command builds for patterns and their dependencies.
func exportImporter(t *testing.T, patterns ...string) types.Importer {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read export data: %v", err)
	}
	cmd := exec.Command(goCmd, append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}, patterns...)...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -export %v: %v\n%s", patterns, err, msg)
	}
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, f, ok := strings.Cut(line, " "); ok && f != "" {
			files[p] = f
		}
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}

// isInternal reports whether an import path has an internal element.
func isInternal(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// internalNames lists, for pkg's exported API (package-level names,
// exported fields and embedded fields, methods of exported types and of
// interfaces), every place it names a type of an internal package.
func internalNames(pkg *types.Package) []string {
	var bad []string
	seen := map[types.Type]bool{}
	var walk func(where string, t types.Type)
	walk = func(where string, t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t) // a type may be met again elsewhere
		switch t := t.(type) {
		case *types.Alias:
			walk(where, types.Unalias(t))
		case *types.Named:
			if o := t.Obj(); o.Pkg() != nil && isInternal(o.Pkg().Path()) {
				bad = append(bad, fmt.Sprintf("%s names %s.%s", where, o.Pkg().Path(), o.Name()))
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(where, t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Signature:
			for i := 0; i < t.Params().Len(); i++ {
				walk(where, t.Params().At(i).Type())
			}
			for i := 0; i < t.Results().Len(); i++ {
				walk(where, t.Results().At(i).Type())
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if f := t.Field(i); f.Exported() {
					walk(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := 0; i < t.NumMethods(); i++ {
				m := t.Method(i)
				walk(where+"."+m.Name(), m.Type())
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		o := scope.Lookup(name)
		if !o.Exported() {
			continue
		}
		where := pkg.Path() + "." + name
		switch o := o.(type) {
		case *types.TypeName:
			walk(where, o.Type().Underlying())
			// The pointer's method set: promoted methods count too.
			ms := types.NewMethodSet(types.NewPointer(o.Type()))
			for i := 0; i < ms.Len(); i++ {
				if m := ms.At(i).Obj(); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
		default:
			walk(where, o.Type())
		}
	}
	return bad
}

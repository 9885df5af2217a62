//go:build ignore

// Modzip writes a Go module proxy directory (GOPROXY=file://DIR) serving
// each module directory given at one version, as a tag would publish it:
// its files, minus those of modules nested in it, in the module zip
// format the go command verifies. scripts/release-check.sh uses it to
// build every module of the repository against the versions it requires,
// as users will, before the first tag is cut.
//
//	go run scripts/modzip.go -out DIR -version vX.Y.Z MODULE_DIR...
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "", "proxy directory to write")
	version := flag.String("version", "", "version to publish the modules at (vX.Y.Z)")
	flag.Parse()
	if *out == "" || !strings.HasPrefix(*version, "v") || flag.NArg() == 0 {
		log.Fatal("usage: go run scripts/modzip.go -out DIR -version vX.Y.Z MODULE_DIR...")
	}
	for _, dir := range flag.Args() {
		if err := publish(*out, *version, dir); err != nil {
			log.Fatalf("modzip: %s: %v", dir, err)
		}
	}
}

// publish writes dir's module at version into the proxy directory out.
func publish(out, version, dir string) error {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modulePath(gomod)
	if path == "" || strings.ToLower(path) != path {
		return fmt.Errorf("module path %q: empty, or needs case escaping this tool does not do", path)
	}
	at := filepath.Join(out, filepath.FromSlash(path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	if err := os.WriteFile(filepath.Join(at, version+".info"), info, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	var zbuf bytes.Buffer
	if err := zipModule(&zbuf, path+"@"+version, dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, version+".zip"), zbuf.Bytes(), 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(at, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, version); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// modulePath is the path of a go.mod's module directive.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// zipModule writes the module zip of dir: every regular file under the
// prefix "path@version/", leaving out nested modules (a directory with a
// go.mod of its own), version control and vendor directories, as the go
// command does when it makes one.
func zipModule(w io.Writer, prefix, dir string) error {
	zw := zip.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			switch d.Name() {
			case ".git", ".hg", ".svn", "vendor", "node_modules":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fw, err := zw.Create(prefix + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = fw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version is what `memvault --version` prints, from the build information
// the Go toolchain records: the CLI module's version (a tag when built by
// `go install …/cmd/memvault@vX.Y.Z`, "(devel)" from a checkout), the
// library version it was built with, the VCS revision and time when the
// build recorded them ("+modified" for uncommitted changes), and Go's.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	out := bi.Main.Version
	if out == "" {
		out = "(devel)"
	}
	var details []string
	for _, d := range bi.Deps {
		if d.Path == "github.com/memvault/memvault" {
			v := d.Version
			if d.Replace != nil {
				v = "replaced by " + d.Replace.Path
				if d.Replace.Version != "" && d.Replace.Version != "(devel)" {
					v += "@" + d.Replace.Version
				}
			}
			details = append(details, "library "+v)
		}
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		details = append(details, "revision "+rev[:min(12, len(rev))]+modified)
	}
	if at != "" {
		details = append(details, at)
	}
	details = append(details, bi.GoVersion)
	return fmt.Sprintf("%s (%s)", out, strings.Join(details, ", "))
}

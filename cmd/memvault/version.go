package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
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

// buildVersion is what `memvault --json --version` prints: the parts of
// the text version as fields (empty ones left out).
type buildVersion struct {
	Version  string `json:"version"`
	Library  string `json:"library,omitempty"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"time,omitempty"`
	Go       string `json:"go"`
}

func buildVersionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/memvault/memvault" {
			v.Library = d.Version
			if d.Replace != nil {
				v.Library = "replaced by " + d.Replace.Path
				if d.Replace.Version != "" && d.Replace.Version != "(devel)" {
					v.Library += "@" + d.Replace.Version
				}
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func versionOf(bi *debug.BuildInfo) string {
	v := buildVersionOf(bi)
	var details []string
	if v.Library != "" {
		details = append(details, "library "+v.Library)
	}
	if v.Revision != "" {
		modified := ""
		if v.Modified {
			modified = "+modified"
		}
		details = append(details, "revision "+v.Revision[:min(12, len(v.Revision))]+modified)
	}
	if v.Time != "" {
		details = append(details, v.Time)
	}
	details = append(details, v.Go)
	return fmt.Sprintf("%s (%s)", v.Version, strings.Join(details, ", "))
}

// versionOutput is the --version template's text: cobra's line, or with
// --json one JSON object (the convention of a command that does not list).
func versionOutput(c *cobra.Command) string {
	if f := c.Flag("json"); f == nil || f.Value.String() != "true" {
		return "memvault version " + c.Version + "\n"
	}
	v := buildVersion{Version: "unknown (no build information)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = buildVersionOf(bi)
	}
	return compactJSON(v) + "\n"
}

func init() { cobra.AddTemplateFunc("memvaultVersion", versionOutput) }

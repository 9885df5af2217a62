package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	r := cli(t, nil, "", "--version").must(t, 0)
	if !strings.HasPrefix(r.stdout, "memvault version ") || !strings.Contains(r.stdout, "go1.") {
		t.Fatalf("--version printed %q", r.stdout)
	}
}

// TestVersionOf: a binary installed at a tag names the tag and the library
// version; one built from a dirty checkout says so.
func TestVersionOf(t *testing.T) {
	tagged := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/memvault/memvault/cmd/memvault", Version: "v0.1.0"},
		Deps: []*debug.Module{{Path: "github.com/memvault/memvault", Version: "v0.1.0"}}}
	if got, want := versionOf(tagged), "v0.1.0 (library v0.1.0, go1.26.8)"; got != want {
		t.Fatalf("tagged: %q, want %q", got, want)
	}
	dev := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Deps:     []*debug.Module{{Path: "github.com/memvault/memvault", Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-29T07:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionOf(dev), "(devel) (library replaced by ../.., revision 0123456789ab+modified, 2026-11-29T07:00:00Z, go1.26.8)"; got != want {
		t.Fatalf("dev: %q, want %q", got, want)
	}
}

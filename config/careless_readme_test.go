package config

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestCarelessREADMEConfigTable: README's Configuration section says
// "config.FromEnv() reads these" over a table of variables. Every
// variable the table names must be one FromLookup reads, and every
// variable FromLookup reads must be in the table (a user learns them
// there). The variables read are recorded through the lookup function.
func TestCarelessREADMEConfigTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Configuration\n")
	if start < 0 {
		t.Fatal("README has no Configuration section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	inTable := map[string]bool{}
	row := regexp.MustCompile(`(?m)^\| ([^|]+) \|`)
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	for _, r := range row.FindAllStringSubmatch(section, -1) {
		for _, n := range name.FindAllStringSubmatch(r[1], -1) {
			inTable[n[1]] = true
		}
	}
	if len(inTable) < 20 {
		t.Fatalf("found %d variables in README's table; the parser is wrong", len(inTable))
	}

	read := map[string]bool{}
	// With every variable unset, FromLookup asks for each one it knows
	// (DATABASE_URL only when MEMVAULT_DSN is unset, as here).
	_, _ = FromLookup(func(k string) (string, bool) {
		read[k] = true
		return "", false
	})

	var missingInCode, missingInTable []string
	for n := range inTable {
		if !read[n] {
			missingInCode = append(missingInCode, n)
		}
	}
	for n := range read {
		if !inTable[n] {
			missingInTable = append(missingInTable, n)
		}
	}
	sort.Strings(missingInCode)
	sort.Strings(missingInTable)
	if len(missingInCode) > 0 {
		t.Errorf("README's Configuration table names variables config.FromEnv does not read: %v", missingInCode)
	}
	if len(missingInTable) > 0 {
		t.Errorf("config.FromEnv reads variables README's Configuration table does not name: %v", missingInTable)
	}
}

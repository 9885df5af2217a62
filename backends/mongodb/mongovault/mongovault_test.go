package mongovault_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongovault"
	"github.com/memvault/memvault/config"
)

// TestDatabase: MEMVAULT_SCHEMA, else the URI's database, else Python
// MongoDBSaver's default; a URI that does not parse is an error that does
// not print its password.
func TestDatabase(t *testing.T) {
	for _, c := range []struct{ dsn, schema, want string }{
		{"mongodb://h:27017/", "", mongovault.DefaultDatabase},
		{"mongodb://h:27017", "", mongovault.DefaultDatabase},
		{"mongodb://u:p@h:27017/agents?authSource=admin", "", "agents"},
		{"mongodb://h:27017/agents", "other", "other"},
	} {
		got, err := mongovault.Database(config.Config{DSN: c.dsn, Schema: c.schema})
		if err != nil || got != c.want {
			t.Errorf("Database(%q, schema %q) = %q, %v; want %q", c.dsn, c.schema, got, err, c.want)
		}
	}
	_, err := mongovault.Database(config.Config{DSN: "mongodb://u:secret@h:27017/db?connectTimeoutMS=x"})
	if err == nil {
		t.Fatal("a bad URI option: no error")
	}
	if s := err.Error(); strings.Contains(s, "secret") {
		t.Errorf("error shows the password: %s", s)
	}
}

// TestDatabaseNameRefused: a database name MongoDB refuses is an error
// when the settings are read, naming the character, without the URI's
// password (before, mongodb://h//agents gave "/agents", refused only at
// Setup by the server).
func TestDatabaseNameRefused(t *testing.T) {
	for _, c := range []struct{ dsn, schema string }{
		{"mongodb://u:secret@h:27017//agents", ""},
		{"mongodb://h:27017/a.b", ""},
		{"mongodb://h:27017/", "my db"},
		{"mongodb://h:27017/", "x\x00y"},
		{"mongodb://h:27017/", strings.Repeat("d", 64)},
	} {
		got, err := mongovault.Database(config.Config{DSN: c.dsn, Schema: c.schema})
		if err == nil {
			t.Errorf("Database(%q, schema %q) = %q; want an error", c.dsn, c.schema, got)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

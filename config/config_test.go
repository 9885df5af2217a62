package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"

	_ "modernc.org/sqlite"
)

func TestFromLookupDefaults(t *testing.T) {
	c, err := FromLookup(lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DBPath != DefaultDBPath || c.DSN != "" || c.EffectiveEncryption() != EncryptionOff ||
		c.Embeddings != DefaultEmbeddings || c.CacheSize != DefaultCacheSize || c.Versions != checkpointer.VersionString {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestFromLookupValues(t *testing.T) {
	c, err := FromLookup(lookup(map[string]string{
		"DATABASE_URL":               "postgres://b",
		"MEMVAULT_DSN":               "postgres://a",
		"LANGGRAPH_AES_KEY":          " 0123456789abcdef ", // raw: not trimmed
		"LANGGRAPH_AES_KEY_PREVIOUS": "k1, k2,,",           // kept as written: crypto judges white space
		"MEMVAULT_ENCRYPTION":        "LangGraph",
		"MEMVAULT_INDEX_FIELDS":      "text, facts[*].text",
		"MEMVAULT_DISTANCE":          "l2",
		"MEMVAULT_CACHE_SIZE":        "0",
		"MEMVAULT_VERSIONS":          "int",
		"MEMVAULT_ALLOW_PLAINTEXT":   "true",
		"MEMVAULT_EMBEDDINGS":        "openai:text-embedding-3-small:512",

		"MEMVAULT_DANGEROUS_SKIP_KEY_CHECK": "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DSN != "postgres://a" || c.Keys.Primary != " 0123456789abcdef " || strings.Join(c.Keys.Previous, "|") != "k1| k2" ||
		c.Encryption != EncryptionLangGraph || strings.Join(c.IndexFields, "|") != "text|facts[*].text" ||
		c.Distance != store.L2 || c.CacheSize != 0 || c.Versions != checkpointer.VersionInt || !c.DangerousAllowPlaintext || !c.DangerousSkipKeyCheck {
		t.Fatalf("parsed = %+v", c)
	}
	if s := fmt.Sprintf("%v %+v %#v", c.Keys, c.Keys, c.Keys); strings.Contains(s, "0123456789abcdef") || strings.Contains(s, "k1") {
		t.Fatalf("keys printed: %s", s)
	}
}

func TestFromLookupErrorsNameTheVariable(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"MEMVAULT_ENCRYPTION":               {"MEMVAULT_ENCRYPTION": "aes"},
		"MEMVAULT_ALLOW_PLAINTEXT":          {"MEMVAULT_ALLOW_PLAINTEXT": "sometimes"},
		"MEMVAULT_DANGEROUS_SKIP_KEY_CHECK": {"MEMVAULT_DANGEROUS_SKIP_KEY_CHECK": "maybe"},
		"MEMVAULT_CACHE_SIZE":               {"MEMVAULT_CACHE_SIZE": "-1"},
		"MEMVAULT_VERSIONS":                 {"MEMVAULT_VERSIONS": "float"},
		"MEMVAULT_EMBEDDINGS":               {"MEMVAULT_EMBEDDINGS": "hash:x"},
		"MEMVAULT_DISTANCE":                 {"MEMVAULT_DISTANCE": "manhattan"},
		"MEMVAULT_GROUP_COMMIT":             {"MEMVAULT_GROUP_COMMIT": "1"},
		"MEMVAULT_GROUP_COMMIT ":            {"MEMVAULT_GROUP_COMMIT": "-2"},
		"MEMVAULT_GROUP_COMMIT  ":           {"MEMVAULT_GROUP_COMMIT": "99999999999999999999"},
		"MEMVAULT_SQLITE_FULL_SYNC":         {"MEMVAULT_SQLITE_FULL_SYNC": "always"},
		"LANGGRAPH_AES_KEY":                 {"MEMVAULT_ENCRYPTION": "envelope"},
	} {
		_, err := FromLookup(lookup(env))
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(name)) {
			t.Errorf("%v: err = %v, want it to name %s", env, err, name)
		}
		kind := ErrInvalidSetting
		if name == "LANGGRAPH_AES_KEY" {
			kind = ErrMissingSetting
		}
		if !errors.Is(err, kind) {
			t.Errorf("%v: err = %v, want it to wrap %v", env, err, kind)
		}
	}
}

func TestSerializerModes(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	for mode, wantTag := range map[EncryptionMode]string{EncryptionOff: "json", EncryptionEnvelope: "json+mvgcm", EncryptionLangGraph: "json+aes"} {
		c := Default()
		c.Keys.Primary, c.Encryption = key, mode
		s, err := c.Serializer()
		if err != nil {
			t.Fatal(err)
		}
		typ, _, err := serde.DumpsWith(s, map[string]any{"a": 1}, []byte("row"))
		if err != nil || typ != wantTag {
			t.Errorf("%s: tag %q, %v; want %q", mode, typ, err, wantTag)
		}
	}
	c := Default()
	c.Keys.Primary = "short"
	if _, err := c.Serializer(); err == nil || !strings.Contains(err.Error(), "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.") || strings.Contains(err.Error(), "short") {
		t.Fatalf("short key: %v", err)
	}
}

func TestKeysNeverPrinted(t *testing.T) {
	c := Default()
	c.Keys = Keys{Primary: "PRIMARYKEY-0123456789abcdef", Previous: []string{"PREVIOUSKEY-0123456789ab"}}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%t", "%9.3f"} {
		out = append(out, fmt.Sprintf(verb, c), fmt.Sprintf(verb, c.Keys), fmt.Sprintf(verb, &c))
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(b))
	for _, s := range out {
		if strings.Contains(s, "PRIMARYKEY") || strings.Contains(s, "PREVIOUSKEY") {
			t.Fatalf("keys printed: %s", s)
		}
	}
	if !strings.Contains(string(b), `"Keys":{"primary_set":true,"previous":1}`) {
		t.Fatalf("JSON = %s", b)
	}
}

func TestKeyTrailingNewlineSameInBothVariables(t *testing.T) {
	raw := "0123456789abcdef0123456789abcde\n" // 32 bytes with the newline
	for _, env := range []map[string]string{
		{"LANGGRAPH_AES_KEY": raw},
		{"LANGGRAPH_AES_KEY": "hex:000102030405060708090a0b0c0d0e0f", "LANGGRAPH_AES_KEY_PREVIOUS": raw},
	} {
		c, err := FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Keyring(); !errors.Is(err, crypto.ErrKeyWhitespace) {
			t.Errorf("%v: Keyring() = %v, want crypto.ErrKeyWhitespace", env, err)
		}
	}
}

func TestTTLConfigErrors(t *testing.T) {
	for name, v := range map[string]string{
		"MEMVAULT_TTL_DEFAULT":         "-1h",
		"MEMVAULT_TTL_REFRESH_ON_READ": "sometimes",
		"MEMVAULT_TTL_SWEEP_INTERVAL":  "0",
	} {
		_, err := FromLookup(lookup(map[string]string{name: v}))
		if err == nil || !strings.Contains(err.Error(), name) || !errors.Is(err, ErrInvalidSetting) {
			t.Errorf("%s=%q: error %v, want one naming the variable and wrapping ErrInvalidSetting", name, v, err)
		}
	}
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestDatabaseVariablesPrecedence: MEMVAULT_DB wins over the generic
// DATABASE_URL another program may have exported (session 23 review:
// import wrote into DATABASE_URL's server, the named file never made),
// MEMVAULT_DSN over DATABASE_URL, and MEMVAULT_DB with MEMVAULT_DSN is an
// error naming both.
func TestDatabaseVariablesPrecedence(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		dsn, db  string
		errNames []string
	}{
		{env: map[string]string{"MEMVAULT_DB": "a.db", "DATABASE_URL": "postgres://h/app"}, db: "a.db"},
		{env: map[string]string{"MEMVAULT_DSN": "postgres://h/mv", "DATABASE_URL": "postgres://h/app"}, dsn: "postgres://h/mv", db: DefaultDBPath},
		{env: map[string]string{"DATABASE_URL": "postgres://h/app"}, dsn: "postgres://h/app", db: DefaultDBPath},
		{env: map[string]string{"MEMVAULT_DB": "a.db", "MEMVAULT_DSN": "postgres://h/mv"}, errNames: []string{"MEMVAULT_DB", "MEMVAULT_DSN"}},
	} {
		c, err := FromLookup(lookup(tc.env))
		if tc.errNames != nil {
			if !errors.Is(err, ErrInvalidSetting) {
				t.Errorf("%v: %v, want ErrInvalidSetting", tc.env, err)
				continue
			}
			for _, n := range tc.errNames {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("%v: %v does not name %s", tc.env, err, n)
				}
			}
			continue
		}
		if err != nil || c.DSN != tc.dsn || c.DBPath != tc.db {
			t.Errorf("%v: DSN %q, DBPath %q, %v; want %q, %q", tc.env, c.DSN, c.DBPath, err, tc.dsn, tc.db)
		}
	}
}

// TestConnectionStringInPathSettingRefused: a DSN put in a setting that
// names a file or a schema is refused before anything is opened or made,
// and the error does not print it; SQLite file: URIs and ordinary paths
// and schema names pass.
func TestConnectionStringInPathSettingRefused(t *testing.T) {
	for _, tc := range []struct {
		setting string
		set     func(*Config, string)
	}{
		{"MEMVAULT_DB", func(c *Config, v string) { c.DBPath = v }},
		{"MEMVAULT_KEY_TABLE", func(c *Config, v string) { c.KeyTable = v }},
		{"MEMVAULT_AUDIT_TABLE", func(c *Config, v string) { c.AuditTable = v }},
	} {
		for _, v := range []string{"postgres://app:s3cretpart@db:5432/app", "mongodb+srv://u:s3cretpart@cluster/x",
			"host=db user=app password=s3cretpart dbname=app", "dbname=app password = s3cretpart", "redis://:s3cretpart@cache:6379/0",
			`"postgres://app:s3cretpart@db:5432/app"`, `'postgres://app:s3cretpart@db:5432/app'`, " postgres://app:s3cretpart@db/app"} {
			c := Config{DBPath: "memvault.db"}
			tc.set(&c, v)
			err := c.Validate()
			if !errors.Is(err, ErrInvalidSetting) || !strings.Contains(err.Error(), tc.setting) || strings.Contains(err.Error(), "s3cretpart") {
				t.Errorf("%s=%q: %v", tc.setting, v, err)
			}
		}
		for _, v := range []string{"data/memvault.db", "file:memvault.db?mode=rwc", "memvault_keys", "/var/lib/app/keys.db", "host.db",
			"host=web1/agent.db", "/data/dbname=app/keys.db"} {
			c := Config{DBPath: "memvault.db"}
			tc.set(&c, v)
			if err := c.Validate(); err != nil {
				t.Errorf("%s=%q refused: %v", tc.setting, v, err)
			}
		}
	}
}

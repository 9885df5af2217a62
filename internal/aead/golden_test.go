package aead

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/crypto"
)

// The golden files are written only by `go test -run TestGolden
// -update-golden`; the output must be reviewed before it is committed. A
// normal run only reads them, so a format change can never regenerate them
// silently.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.golden (review the diff!)")

// goldenCase is one line of a golden file.
type goldenCase struct {
	Name      string `json:"name"`
	Key       string `json:"key"`                // as in LANGGRAPH_AES_KEY
	Previous  string `json:"previous,omitempty"` // as in LANGGRAPH_AES_KEY_PREVIOUS
	Mode      string `json:"mode,omitempty"`     // aes only: mode that wrote the blob
	AAD       string `json:"aad_hex,omitempty"`
	Plaintext string `json:"plaintext_hex"`
	Blob      string `json:"blob_hex"`
}

func goldenInputs() map[string][]goldenCase {
	return map[string][]goldenCase{
		"aes_eax.golden": {
			{Name: "reference KAT msgpack {a:1}", Key: katKey, Mode: "eax", Plaintext: "81a16101"},
			{Name: "empty plaintext (null+aes)", Key: katKey, Mode: "eax"},
			{Name: "aes-128 json", Key: "sixteen-byte-key", Mode: "eax", Plaintext: hex.EncodeToString([]byte(`{"messages":["hi"]}`))},
		},
		"aes_gcm.golden": {
			{Name: "reference KAT msgpack {a:1}", Key: katKey, Mode: "gcm", Plaintext: "81a16101"},
			{Name: "empty plaintext (null+aes)", Key: katKey, Mode: "gcm"},
			{Name: "aes-192 json", Key: "twenty-four-byte-key-192", Mode: "gcm", Plaintext: hex.EncodeToString([]byte(`{"messages":["hi"]}`))},
		},
		"envelope_v1.golden": {
			{Name: "no aad", Key: katKey, Plaintext: "81a16101"},
			{Name: "blob aad", Key: katKey, AAD: hex.EncodeToString([]byte("memvault/blob/v1\x00\x01t\x00\x08messages\x011")), Plaintext: hex.EncodeToString([]byte(`["hello"]`))},
			{Name: "empty plaintext", Key: katKey, AAD: "00ff"},
			{Name: "written by a key now previous", Key: "old-key-16-bytes", Plaintext: "c0"},
		},
	}
}

func TestGolden(t *testing.T) {
	for file, inputs := range goldenInputs() {
		path := filepath.Join("testdata", file)
		if *updateGolden {
			writeGolden(t, path, inputs)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (generate with -update-golden)", err)
		}
		var cases []goldenCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatal(err)
		}
		if len(cases) != len(inputs) {
			t.Fatalf("%s: %d cases, want %d", file, len(cases), len(inputs))
		}
		for _, c := range cases {
			// Read with a keyring whose primary is a different key, so
			// that previous-key reading is exercised too.
			r := ring(t, "another-primary-key-0123", c.Key)
			var ciph Cipher
			if c.Mode != "" {
				ciph, _ = NewAES(r, crypto.ModeGCM)
			} else {
				ciph, _ = NewEnvelope(r)
			}
			aad := unhex(t, c.AAD)
			if c.Mode != "" {
				aad = nil
			}
			got, err := ciph.Decrypt(unhex(t, c.Blob), aad)
			if err != nil || !bytes.Equal(got, unhex(t, c.Plaintext)) {
				t.Errorf("%s %q: %x, %v", file, c.Name, got, err)
			}
		}
	}
}

func writeGolden(t *testing.T, path string, inputs []goldenCase) {
	out := make([]goldenCase, len(inputs))
	for i, c := range inputs {
		r := ring(t, c.Key)
		var blob []byte
		var err error
		switch c.Mode {
		case "eax", "gcm":
			m := crypto.ModeGCM
			if c.Mode == "eax" {
				m = crypto.ModeEAX
			}
			a, _ := NewAES(r, m)
			a.rand = fixedRand
			blob, err = a.Encrypt(unhex(t, c.Plaintext), nil)
		default:
			e, _ := NewEnvelope(r)
			e.rand = fixedRand
			blob, err = e.Encrypt(unhex(t, c.Plaintext), unhex(t, c.AAD))
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Blob = hex.EncodeToString(blob)
		out[i] = c
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: review before committing", path)
}

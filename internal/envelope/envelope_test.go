package envelope

import (
	"bytes"
	"errors"
	"testing"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	raw := Encode("json+mvgcm", []byte{0, 1, 2, 0xff})
	tag, data, ok, err := Parse(raw)
	if err != nil || !ok || tag != "json+mvgcm" || !bytes.Equal(data, []byte{0, 1, 2, 0xff}) {
		t.Fatalf("Parse(%s) = %q %v %v %v", raw, tag, data, ok, err)
	}
}

func TestEnvelopePlainValues(t *testing.T) {
	for _, raw := range []string{
		`{"t":"json","d":"e30="}`, // looks like an envelope but has no marker
		`{"note":{"__memvault_enc__":1,"t":"x","d":""}}`,
		`{"text":"mentions \"__memvault_enc__\" in a string"}`,
		`[1,2]`,
		`not json`,
	} {
		if _, _, ok, err := Parse([]byte(raw)); ok || err != nil {
			t.Errorf("%s: ok=%v err=%v, want a plain value", raw, ok, err)
		}
	}
}

func TestEnvelopeMalformed(t *testing.T) {
	for _, raw := range []string{
		`{"__memvault_enc__":2,"t":"json+mvgcm","d":""}`,
		`{"__memvault_enc__":1,"t":"","d":""}`,
		`{"__memvault_enc__":1,"t":"json+mvgcm","d":"***"}`,
		`{"__memvault_enc__":1,"t":"json+mvgcm","d":"","x":1}`,
		`{"__memvault_enc__":1,"t":"json+mvgcm"}`,
	} {
		if _, _, ok, err := Parse([]byte(raw)); ok || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ok=%v err=%v, want ErrMalformed", raw, ok, err)
		}
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add(Encode("json+aes", []byte("x")))
	f.Add([]byte(`{"__memvault_enc__":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		tag, data, ok, err := Parse(raw)
		if ok {
			if err != nil {
				t.Fatal("ok with an error")
			}
			again, data2, ok2, err2 := Parse(Encode(tag, data))
			if !ok2 || err2 != nil || again != tag || !bytes.Equal(data, data2) {
				t.Fatalf("re-encoding changed the envelope")
			}
		}
	})
}

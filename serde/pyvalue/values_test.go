package pyvalue

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseUUIDForms(t *testing.T) {
	const want = "1ef4f797-8335-6428-8001-8a1503f9b875"
	for _, in := range []string{
		want,
		"1EF4F797-8335-6428-8001-8A1503F9B875",
		"{" + want + "}",
		"urn:uuid:" + want,
		"1ef4f7978335642880018a1503f9b875",
	} {
		u, err := ParseUUID(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseUUID(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, in := range []string{"", "1ef4f797", want + "00", "zef4f797-8335-6428-8001-8a1503f9b875", "1ef4f797-8335-6428-8001-8a1503f9b87\x00"} {
		if _, err := ParseUUID(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseUUID(%q) = %v; want ErrMalformed", in, err)
		}
	}
}

// A UUID inside a struct goes through encoding/json as its canonical
// string and back.
func TestUUIDTextRoundTrip(t *testing.T) {
	u, err := ParseUUID("1ef4f797-8335-6428-8001-8a1503f9b875")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]UUID{"id": u})
	if err != nil || string(b) != `{"id":"1ef4f797-8335-6428-8001-8a1503f9b875"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back map[string]UUID
	if err := json.Unmarshal(b, &back); err != nil || back["id"] != u {
		t.Fatalf("Unmarshal = %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"id":"nope"}`), &back); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Unmarshal of a bad UUID = %v; want ErrMalformed", err)
	}
}

func TestPaths(t *testing.T) {
	if p := (Constructor{ID: []string{"langchain", "schema", "AIMessage"}}).Path(); p != "langchain.schema.AIMessage" {
		t.Errorf("Constructor.Path = %q", p)
	}
	if p := (PyObject{Module: "datetime", Class: "date"}).Path(); p != "datetime.date" {
		t.Errorf("PyObject.Path = %q", p)
	}
	if p := (PyObject{Class: "date"}).Path(); p != "date" {
		t.Errorf("PyObject.Path without module = %q", p)
	}
	if f := (PyObject{Arg: map[string]any{"a": int64(1)}}).Fields(); f["a"] != int64(1) {
		t.Errorf("Fields = %v", f)
	}
	if f := (PyObject{Arg: "x"}).Fields(); f != nil {
		t.Errorf("Fields of a single argument = %v; want nil", f)
	}
}

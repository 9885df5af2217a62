package envelope

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Marker is the key that marks a stored item value as an envelope:
// the output of a serializer (typically encrypted) kept in a JSON column
// as {"__memvault_enc__": 1, "t": "<type tag>", "d": "<base64 payload>"}.
// Every SQL store writes this one form, so a value written by one backend
// reads in another.
const Marker = "__memvault_enc__"

// ErrMalformed is returned for a stored value that carries the envelope
// marker but is not a well-formed envelope.
var ErrMalformed = errors.New("store: malformed value envelope")

type envelope struct {
	Version int    `json:"__memvault_enc__"`
	Tag     string `json:"t"`
	Data    string `json:"d"`
}

// Encode returns the envelope holding a serializer's output.
func Encode(tag string, data []byte) []byte {
	b, _ := json.Marshal(envelope{Version: 1, Tag: tag, Data: base64.StdEncoding.EncodeToString(data)}) // cannot fail: strings only
	return b
}

// Parse reports whether raw is an envelope and, if so, returns its
// tag and payload. A JSON object without the marker at its top level is a
// plain value (ok false, no error); one with the marker must be a
// well-formed version 1 envelope, or the error wraps ErrMalformed.
func Parse(raw []byte) (tag string, data []byte, ok bool, err error) {
	if !bytes.Contains(raw, []byte(`"`+Marker+`"`)) {
		return "", nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, false, nil // not an object: a plain value
	}
	if _, marked := m[Marker]; !marked {
		return "", nil, false, nil // the marker text appears only nested
	}
	var env envelope
	if len(m) != 3 || json.Unmarshal(raw, &env) != nil || env.Version != 1 || env.Tag == "" {
		return "", nil, false, fmt.Errorf("%w: %.80s", ErrMalformed, raw)
	}
	data, err = base64.StdEncoding.DecodeString(env.Data)
	if err != nil {
		return "", nil, false, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	return env.Tag, data, true, nil
}

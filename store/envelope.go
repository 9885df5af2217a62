package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// EnvelopeMarker is the key that marks a stored item value as an envelope:
// the output of a serializer (typically encrypted) kept in a JSON column
// as {"__memvault_enc__": 1, "t": "<type tag>", "d": "<base64 payload>"}.
// Every SQL store writes this one form, so a value written by one backend
// reads in another.
const EnvelopeMarker = "__memvault_enc__"

// ErrEnvelope is returned for a stored value that carries the envelope
// marker but is not a well-formed envelope.
var ErrEnvelope = errors.New("store: malformed value envelope")

type envelope struct {
	Version int    `json:"__memvault_enc__"`
	Tag     string `json:"t"`
	Data    string `json:"d"`
}

// EncodeEnvelope returns the envelope holding a serializer's output.
func EncodeEnvelope(tag string, data []byte) []byte {
	b, _ := json.Marshal(envelope{Version: 1, Tag: tag, Data: base64.StdEncoding.EncodeToString(data)}) // cannot fail: strings only
	return b
}

// ParseEnvelope reports whether raw is an envelope and, if so, returns its
// tag and payload. A JSON object without the marker at its top level is a
// plain value (ok false, no error); one with the marker must be a
// well-formed version 1 envelope, or the error wraps ErrEnvelope.
func ParseEnvelope(raw []byte) (tag string, data []byte, ok bool, err error) {
	if !bytes.Contains(raw, []byte(`"`+EnvelopeMarker+`"`)) {
		return "", nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, false, nil // not an object: a plain value
	}
	if _, marked := m[EnvelopeMarker]; !marked {
		return "", nil, false, nil // the marker text appears only nested
	}
	var env envelope
	if len(m) != 3 || json.Unmarshal(raw, &env) != nil || env.Version != 1 || env.Tag == "" {
		return "", nil, false, fmt.Errorf("%w: %.80s", ErrEnvelope, raw)
	}
	data, err = base64.StdEncoding.DecodeString(env.Data)
	if err != nil {
		return "", nil, false, fmt.Errorf("%w: payload: %v", ErrEnvelope, err)
	}
	return env.Tag, data, true, nil
}

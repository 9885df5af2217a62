package core

import (
	"encoding/json"
	"strings"
)

// scanStoredCheckpoint fills sc from a checkpoint document in the shape
// every LangGraph writer produces, without encoding/json's reflection: it
// is on the path of every GetTuple and List, once per checkpoint. ok is
// false for anything else (escaped keys or strings, a non-integer v, null
// where an object is expected, a repeated top-level key, ...); the caller
// then decodes with encoding/json, which defines the semantics: for every
// input where ok is true, sc is what encoding/json would produce
// (FuzzScanStoredCheckpoint checks this). It checks the syntax of what it
// takes: its own tokens as it reads them, raw values (channel_values,
// pending_sends, unknown keys) with json.Valid. The raw values in sc alias
// b.
func scanStoredCheckpoint(b []byte, sc *storedCheckpoint) (ok bool) {
	s := docScanner{b: b}
	var seen uint8
	return s.object(func(key string) bool {
		var bit uint8
		ok := false
		switch key {
		case "v":
			bit = 1
			sc.V, ok = s.smallInt()
		case "id":
			bit = 2
			sc.ID, ok = s.plainString()
		case "ts":
			bit = 4
			sc.TS, ok = s.plainString()
		case "channel_values":
			bit = 8
			sc.ChannelValues, ok = s.rawObject()
		case "channel_versions":
			bit = 16
			sc.ChannelVersions, ok = s.versionObject()
		case "versions_seen":
			bit = 32
			sc.VersionsSeen = map[string]map[string]json.RawMessage{}
			ok = s.object(func(node string) bool {
				m, ok := s.versionObject()
				sc.VersionsSeen[node] = m
				return ok
			})
		case "updated_channels":
			bit = 64
			sc.UpdatedChannels, ok = s.stringArray()
		case "pending_sends":
			bit = 128
			sc.PendingSends, ok = s.validRaw()
		default:
			// An unknown key is skipped, as encoding/json does, unless it
			// is a field name in other case, which encoding/json matches.
			_, ok = s.validRaw()
			ok = ok && !foldsToField(key)
		}
		if !ok || seen&bit != 0 {
			return false // a repeated key: leave the merging rules to encoding/json
		}
		seen |= bit
		return true
	}) && s.end()
}

// docScanner walks a JSON document.
type docScanner struct {
	b       []byte
	i       int
	tooDeep bool // a raw value nests deeper than maxRawDepth
}

// maxRawDepth bounds the nesting of raw values the scanner takes, well
// inside encoding/json's limit for the whole document, which json.Valid on
// a part cannot check.
const maxRawDepth = 1000

func (s *docScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and c, if c is next.
func (s *docScanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *docScanner) literal(lit string) bool {
	s.ws()
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *docScanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// plainString reads a string that needs no unescaping (see plainJSONString).
func (s *docScanner) plainString() (string, bool) {
	if !s.consume('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return string(s.b[start : s.i-1]), true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", false
		}
		s.i++
	}
	return "", false
}

// smallInt reads a plain integer (see plainInteger) that fits an int.
func (s *docScanner) smallInt() (int, bool) {
	s.ws()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	num := s.b[start:s.i]
	if !plainInteger(num) || len(num) > 9 || (s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E')) {
		return 0, false
	}
	n := 0
	for _, c := range num {
		n = n*10 + int(c-'0')
	}
	return n, true
}

// rawValue skips one value and returns its bytes. It finds the end of a
// valid value; on invalid input it stops somewhere, and validRaw rejects
// what it returns.
func (s *docScanner) rawValue() json.RawMessage {
	s.ws()
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
			s.i = min(s.i, len(s.b)) // an unterminated string
		case c == '{' || c == '[':
			if depth++; depth > maxRawDepth {
				s.tooDeep = true
			}
			s.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return s.b[start:s.i]
			}
			depth--
			s.i++
		case c == ',' && depth == 0:
			return s.b[start:s.i]
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if depth == 0 {
				return s.b[start:s.i]
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return s.b[start:s.i]
		}
	}
	return s.b[start:s.i]
}

// validRaw is rawValue, checked with json.Valid.
func (s *docScanner) validRaw() (json.RawMessage, bool) {
	raw := s.rawValue()
	return raw, !s.tooDeep && json.Valid(raw)
}

// object reads an object of plain keys, calling member after each key's
// colon to read its value; member returns false to give up.
func (s *docScanner) object(member func(key string) bool) bool {
	if !s.consume('{') {
		return false
	}
	for i := 0; !s.consume('}'); i++ {
		if i > 0 && !s.consume(',') {
			return false
		}
		k, ok := s.plainString()
		if !ok || !s.consume(':') || !member(k) {
			return false
		}
	}
	return true
}

// stringArray reads null (nil) or an array of plain strings (never nil).
func (s *docScanner) stringArray() ([]string, bool) {
	if s.literal("null") {
		return nil, true
	}
	if !s.consume('[') {
		return nil, false
	}
	out := []string{}
	for i := 0; !s.consume(']'); i++ {
		if i > 0 && !s.consume(',') {
			return nil, false
		}
		str, ok := s.plainString()
		if !ok {
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

// rawObject reads an object of plain keys to raw values.
func (s *docScanner) rawObject() (map[string]json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	ok := s.object(func(k string) bool {
		raw, ok := s.validRaw()
		m[k] = raw
		return ok
	})
	return m, ok
}

// versionObject reads an object of plain keys to versions: plain strings
// or plain integers, kept raw for decodeVersion.
func (s *docScanner) versionObject() (map[string]json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	ok := s.object(func(k string) bool {
		s.ws()
		start := s.i
		if s.i < len(s.b) && s.b[s.i] == '"' {
			if _, ok := s.plainString(); !ok {
				return false
			}
		} else {
			for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
				s.i++
			}
			if !plainInteger(s.b[start:s.i]) {
				return false
			}
		}
		m[k] = s.b[start:s.i]
		return true
	})
	return m, ok
}

// foldsToField reports whether key is a field name of storedCheckpoint
// written in other case ("V", "Channel_Versions").
func foldsToField(key string) bool {
	for _, f := range [...]string{"v", "id", "ts", "channel_values", "channel_versions", "versions_seen", "updated_channels", "pending_sends"} {
		if strings.EqualFold(key, f) {
			return true
		}
	}
	return false
}

package checkpointer

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
	if !s.consume('{') {
		return false
	}
	var seen uint8
	first := true
	for {
		if s.consume('}') {
			return s.end()
		}
		if !first && !s.consume(',') {
			return false
		}
		first = false
		key, ok := s.plainString()
		if !ok || !s.consume(':') {
			return false
		}
		var bit uint8
		switch key {
		case "v":
			bit = 1
			n, ok := s.smallInt()
			if !ok {
				return false
			}
			sc.V = n
		case "id":
			bit = 2
			if sc.ID, ok = s.plainString(); !ok {
				return false
			}
		case "ts":
			bit = 4
			if sc.TS, ok = s.plainString(); !ok {
				return false
			}
		case "channel_values":
			bit = 8
			if sc.ChannelValues, ok = s.rawObject(); !ok {
				return false
			}
		case "channel_versions":
			bit = 16
			if sc.ChannelVersions, ok = s.versionObject(); !ok {
				return false
			}
		case "versions_seen":
			bit = 32
			if !s.consume('{') {
				return false
			}
			sc.VersionsSeen = map[string]map[string]json.RawMessage{}
			for i := 0; !s.consume('}'); i++ {
				if i > 0 && !s.consume(',') {
					return false
				}
				node, ok := s.plainString()
				if !ok || !s.consume(':') {
					return false
				}
				if sc.VersionsSeen[node], ok = s.versionObject(); !ok {
					return false
				}
			}
		case "updated_channels":
			bit = 64
			if s.literal("null") {
				sc.UpdatedChannels = nil
				break
			}
			if !s.consume('[') {
				return false
			}
			sc.UpdatedChannels = []string{}
			for i := 0; !s.consume(']'); i++ {
				if i > 0 && !s.consume(',') {
					return false
				}
				ch, ok := s.plainString()
				if !ok {
					return false
				}
				sc.UpdatedChannels = append(sc.UpdatedChannels, ch)
			}
		case "pending_sends":
			bit = 128
			if sc.PendingSends, ok = s.validRaw(); !ok {
				return false
			}
		default:
			if foldsToField(key) {
				return false // encoding/json matches field names case-insensitively
			}
			if _, ok := s.validRaw(); !ok { // an unknown key, skipped as encoding/json does
				return false
			}
		}
		if seen&bit != 0 {
			return false // repeated: leave the merging rules to encoding/json
		}
		seen |= bit
	}
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

// rawObject reads an object of plain keys to raw values.
func (s *docScanner) rawObject() (map[string]json.RawMessage, bool) {
	if !s.consume('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	for i := 0; !s.consume('}'); i++ {
		if i > 0 && !s.consume(',') {
			return nil, false
		}
		k, ok := s.plainString()
		if !ok || !s.consume(':') {
			return nil, false
		}
		if m[k], ok = s.validRaw(); !ok {
			return nil, false
		}
	}
	return m, true
}

// versionObject reads an object of plain keys to versions: plain strings
// or plain integers, kept raw for decodeVersion.
func (s *docScanner) versionObject() (map[string]json.RawMessage, bool) {
	if !s.consume('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	for i := 0; !s.consume('}'); i++ {
		if i > 0 && !s.consume(',') {
			return nil, false
		}
		k, ok := s.plainString()
		if !ok || !s.consume(':') {
			return nil, false
		}
		s.ws()
		start := s.i
		if s.i < len(s.b) && s.b[s.i] == '"' {
			if _, ok := s.plainString(); !ok {
				return nil, false
			}
		} else {
			for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
				s.i++
			}
			if !plainInteger(s.b[start:s.i]) {
				return nil, false
			}
		}
		m[k] = s.b[start:s.i]
	}
	return m, true
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

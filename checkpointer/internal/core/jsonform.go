package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/memvault/memvault/checkpointer"

	"github.com/memvault/memvault/jsonvalue"
)

// EncodeCheckpointJSON returns the stored document of cp without its channel
// values: memvault writes every value as a blob row (readable by Python and
// JS, and encryptable), so channel_values is an empty object. With
// VersionInt, integer versions are written as JSON numbers as JS expects.
//
// It writes the bytes json.Marshal writes for the document (the
// storedCheckpoint struct: keys in field order, map keys sorted, strings
// escaped as encoding/json escapes them), without reflection: every put
// encodes one, and reflection made it a fifth of a put's client CPU.
func EncodeCheckpointJSON(cp *checkpointer.Checkpoint, style checkpointer.VersionStyle) ([]byte, error) {
	if cp == nil {
		return nil, checkpointer.ErrNilCheckpoint
	}
	n := 192 + len(cp.ID) // the keys, the time stamp, the braces
	for ch, v := range cp.ChannelVersions {
		n += len(ch) + len(v) + 6
	}
	for node, seen := range cp.VersionsSeen {
		n += len(node) + 6
		for ch, v := range seen {
			n += len(ch) + len(v) + 6
		}
	}
	for _, ch := range cp.UpdatedChannels {
		n += len(ch) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(cp.V), 10)
	b = append(b, `,"id":`...)
	b = appendJSONString(b, cp.ID)
	b = append(b, `,"ts":"`...)
	b = cp.TS.UTC().AppendFormat(b, checkpointer.TimeLayout) // digits and -:.+ only
	b = append(b, `","channel_values":{},"channel_versions":`...)
	b = appendVersions(b, cp.ChannelVersions, style)
	b = append(b, `,"versions_seen":`...)
	var buf [16]string
	nodes := buf[:0]
	for node := range cp.VersionsSeen {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	b = append(b, '{')
	for i, node := range nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, node)
		b = append(b, ':')
		b = appendVersions(b, cp.VersionsSeen[node], style)
	}
	b = append(b, `},"updated_channels":`...)
	if cp.UpdatedChannels == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, ch := range cp.UpdatedChannels {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, ch)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendVersions appends a channel-version map as json.Marshal writes a
// map of encodeVersion's values: keys sorted, {} for nil or empty.
func appendVersions(b []byte, m map[string]string, style checkpointer.VersionStyle) []byte {
	var buf [16]string
	chs := buf[:0]
	for ch := range m {
		chs = append(chs, ch)
	}
	slices.Sort(chs)
	b = append(b, '{')
	for i, ch := range chs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, ch)
		b = append(b, ':')
		b = appendVersion(b, m[ch], style)
	}
	return append(b, '}')
}

// appendJSONString appends s as encoding/json writes a string: plain when
// every byte is printable ASCII that it does not escape (identifiers
// nearly always are), else through json.Marshal itself, so that the bytes
// never differ from its (HTML escapes, U+2028, invalid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // marshalling a string cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// encodeVersion writes a version as JSON. A version that is a plain
// integer — JS LangGraph's and Python's in-memory savers' form, read into a
// string like every version — is written back as a JSON integer whatever
// the style, so a thread JS wrote stays one JS can continue after it was
// read, copied, exported or imported anywhere; the string style's own
// versions ("<int>.<fraction>") are never plain integers, so it still
// writes them as strings.
func encodeVersion(v string, style checkpointer.VersionStyle) json.RawMessage {
	return appendVersion(nil, v, style)
}

// appendVersion appends encodeVersion(v, style).
func appendVersion(b []byte, v string, _ checkpointer.VersionStyle) []byte {
	if isPlainInt(v) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return strconv.AppendInt(b, n, 10)
		}
	}
	return appendJSONString(b, v)
}

// isPlainInt reports whether v is an integer as strconv.FormatInt writes
// it (no sign, no leading zeros, no space), so that writing it as a number
// and reading it back gives the same string.
func isPlainInt(v string) bool {
	if v == "" || len(v) > 19 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// DecodedCheckpoint is a stored checkpoint document taken apart.
type DecodedCheckpoint struct {
	// Checkpoint has no ChannelValues yet; the loader merges Inline and the
	// blob rows into it.
	Checkpoint *checkpointer.Checkpoint
	// Inline holds values Python LangGraph keeps inline in the document
	// (None, str, int, float, bool). JS ignores them; Python and memvault
	// merge them under the blob values.
	Inline map[string]any
	// HasPendingSends is true for a v<4 document carrying pending_sends.
	HasPendingSends bool
}

// DecodeCheckpointJSON parses a stored checkpoint document written by
// memvault, Python or JS LangGraph. Numeric versions become their decimal
// text; floats that are whole numbers (1.0) become integers.
//
// A document without "v" (or with "v": null) is of the current format,
// 4, as LangGraph JS reads it (undefined < 4 is false) and as the SQL
// drivers' statements read it: every backend returns the same V and
// migrates no pending sends for it.
func DecodeCheckpointJSON(b []byte) (*DecodedCheckpoint, error) {
	sc := storedCheckpoint{V: noV}
	if !scanStoredCheckpoint(b, &sc) {
		sc = storedCheckpoint{V: noV}
		if err := decodeStoredCheckpoint(b, &sc); err != nil {
			return nil, fmt.Errorf("%w: checkpoint document: %v", checkpointer.ErrInvalidCheckpoint, err)
		}
	}
	if sc.V == noV {
		sc.V = CurrentV
	}
	cp := &checkpointer.Checkpoint{
		V:               sc.V,
		ID:              sc.ID,
		ChannelVersions: make(map[string]string, len(sc.ChannelVersions)),
		VersionsSeen:    make(map[string]map[string]string, len(sc.VersionsSeen)),
		UpdatedChannels: sc.UpdatedChannels,
	}
	if sc.TS != "" {
		ts, err := time.Parse(time.RFC3339Nano, sc.TS)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", checkpointer.ErrInvalidCheckpoint, BadTS(sc.TS, err))
		}
		cp.TS = ts
	}
	for ch, raw := range sc.ChannelVersions {
		v, err := decodeVersion(raw)
		if err != nil {
			return nil, err
		}
		cp.ChannelVersions[ch] = v
	}
	for node, seen := range sc.VersionsSeen {
		m := make(map[string]string, len(seen))
		for ch, raw := range seen {
			v, err := decodeVersion(raw)
			if err != nil {
				return nil, err
			}
			m[ch] = v
		}
		cp.VersionsSeen[node] = m
	}
	out := &DecodedCheckpoint{Checkpoint: cp, HasPendingSends: len(sc.PendingSends) > 0 && string(sc.PendingSends) != "null"}
	if len(sc.ChannelValues) > 0 {
		out.Inline = make(map[string]any, len(sc.ChannelValues))
		for ch, raw := range sc.ChannelValues {
			v, err := DecodeJSONValue(raw)
			if err != nil {
				return nil, fmt.Errorf("%w: inline value of %q: %v", checkpointer.ErrInvalidCheckpoint, ch, err)
			}
			out.Inline[ch] = v
		}
	}
	return out, nil
}

func decodeVersion(raw json.RawMessage) (string, error) {
	// Fast paths for what every writer produces: a plain quoted string
	// (Python, memvault) or a plain integer (JS). Each checkpoint has a
	// version per channel and per seen channel, so this is hot in List.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plainJSONString(raw[1:n-1]) {
		return string(raw[1 : n-1]), nil
	}
	if plainInteger(raw) {
		return string(raw), nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: %s", checkpointer.ErrInvalidVersion, raw)
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		f, err := x.Float64()
		if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return x.String(), nil
	}
	return "", fmt.Errorf("%w: %s", checkpointer.ErrInvalidVersion, raw)
}

// plainJSONString reports whether b is the body of a JSON string that needs
// no unescaping: no quote, backslash, control byte or non-ASCII byte.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// plainInteger reports whether b is a JSON integer that fits int64 without
// a sign or leading zeros ("0" or [1-9][0-9]{0,17}).
func plainInteger(b []byte) bool {
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// DecodeJSONValue decodes one JSON value into memvault's JSON value model
// (see package jsonvalue): objects as map[string]any, arrays as []any,
// integers as int64 (uint64 or *big.Int beyond), other numbers as float64.
// A non-integer beyond float64's range is an error.
func DecodeJSONValue(b []byte) (any, error) { return jsonvalue.Unmarshal(b) }

// noTrailingData reports an error when d has input after its first value.
func noTrailingData(d *json.Decoder) error {
	if _, err := d.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// decodeStoredCheckpoint is the general decoder of a checkpoint document,
// whose result defines what scanStoredCheckpoint must produce.
func decodeStoredCheckpoint(b []byte, sc *storedCheckpoint) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(sc); err != nil {
		return err
	}
	return noTrailingData(d)
}

// CurrentV is the format version LangGraph writes today, and the one a
// document without "v" is read as.
const CurrentV = 4

// noV marks a decoded document's V as absent (the decoders leave V alone
// when the key is missing or null): far below any version a writer stores.
const noV = math.MinInt64

// storedCheckpoint is the document LangGraph keeps in the checkpoints table
// (checkpoints.checkpoint JSONB). Versions are raw JSON because Python writes
// strings and JS writes integers.
type storedCheckpoint struct {
	V               int                                   `json:"v"`
	ID              string                                `json:"id"`
	TS              string                                `json:"ts"`
	ChannelValues   map[string]json.RawMessage            `json:"channel_values"`
	ChannelVersions map[string]json.RawMessage            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]json.RawMessage `json:"versions_seen"`
	UpdatedChannels []string                              `json:"updated_channels"`
	PendingSends    json.RawMessage                       `json:"pending_sends,omitempty"`
}

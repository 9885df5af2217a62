package mongosaver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/serde"
)

// The checkpoint binary. Python's MongoDBSaver stores the whole
// checkpoint in it, channel_values inline, as serde.dumps_typed wrote it
// ("msgpack" by default); JS's stores the same dict as "json". Neither has
// another place for values, so the values a Python or JS reader is to see
// must be inline. memvault writes:
//
//   - plaintext values that are JSON (what serde.JSONPlus writes: "json"
//     rows, and "null"): one "json" binary, the engine's document with
//     those rows' bytes spliced into channel_values unchanged. Python's
//     JsonPlusSerializer and JS's both read "json", so neither language
//     needs anything more and the driver opens no value;
//   - plaintext values some of which are not JSON ("msgpack" rows of
//     serde.MsgPack, top-level "bytes"): one "msgpack" binary of the whole
//     checkpoint, exactly as Python writes it (serde.MsgPack is
//     byte-compatible with Python's), which Python reads and JS cannot;
//   - sealed values (encrypting serializer: types "<inner>+<cipher>"): no
//     value inline. They are bound to thread, namespace, channel and
//     version and encrypted under keys only memvault holds, so no other
//     reader can open them; the binary is typed typeSealed, which Python's
//     and JS's serializers refuse loudly, rather than "json", which they
//     would read as a checkpoint without values and continue from an
//     empty state.
//
// Rows that cannot be inline ("empty": a version without a value, sealed
// rows) are in memvault_values. Reading, the rows of a document are its
// inline values (as "json" or "msgpack" rows) overridden by
// memvault_values; the document handed to the engine has its
// channel_values removed, as memvault's own documents have them.
const (
	typeMsgpack = serde.TypeMsgpack
	// typeSealed marks a checkpoint whose values are sealed (see above):
	// the binary is memvault's JSON document without values.
	typeSealed = "json+memvault"
)

// encodeCheckpoint returns the checkpoint binary and its type for doc
// (the engine's JSON document, channel_values empty) holding values, and
// the rows that stay out of it (memvault_values).
func encodeCheckpoint(doc []byte, values []checkpointer.ValueRow) (typ string, bin []byte, rest []checkpointer.ValueRow, err error) {
	sealed, notJSON := false, false
	for _, v := range values {
		switch {
		case strings.Contains(v.Type, "+"):
			sealed = true
		case v.Type == serde.TypeMsgpack || v.Type == serde.TypeBytes || v.Type == serde.TypeByteArray:
			notJSON = true
		}
	}
	if sealed {
		return typeSealed, doc, values, nil
	}
	inline := map[string]json.RawMessage{}
	var mp map[string]any // the msgpack form's channel values
	if notJSON {
		mp = map[string]any{}
	}
	for _, v := range values {
		switch v.Type {
		case serde.TypeEmpty:
			rest = append(rest, v)
			continue
		case serde.TypeNull:
			inline[v.Channel] = json.RawMessage("null")
		case serde.TypeJSON:
			inline[v.Channel] = v.Data
		}
		if mp != nil {
			val, err := serde.JSONPlus{}.LoadsTyped(v.Type, v.Data)
			if err != nil {
				return "", nil, nil, fmt.Errorf("%w: value of channel %q: %w", ErrDocument, v.Channel, err)
			}
			mp[v.Channel] = val
		}
	}
	if mp == nil {
		bin, err := withValues(doc, inline)
		return serde.TypeJSON, bin, rest, err
	}
	d, err := serde.JSONPlus{}.LoadsTyped(serde.TypeJSON, doc)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: checkpoint document: %w", ErrDocument, err)
	}
	m, ok := d.(map[string]any)
	if !ok {
		return "", nil, nil, fmt.Errorf("%w: checkpoint document is not an object", ErrDocument)
	}
	m["channel_values"] = mp
	typ, bin, err = serde.MsgPack{}.DumpsTyped(m)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: checkpoint: %w", ErrDocument, err)
	}
	return typ, bin, rest, nil
}

// withValues is doc with its channel_values replaced by values.
func withValues(doc []byte, values map[string]json.RawMessage) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("%w: checkpoint document: %w", ErrDocument, err)
	}
	cv, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("%w: channel values: %w", ErrDocument, err)
	}
	m["channel_values"] = cv
	return json.Marshal(m)
}

// parsed is a checkpoint binary taken apart: the engine's document
// (channel_values empty), parsed, and the inline values as rows.
type parsed struct {
	doc    []byte
	dec    *engine.Document
	inline []checkpointer.ValueRow
}

// parse takes d's checkpoint binary apart (see the comment above).
func (d *cpDoc) parse() (*parsed, error) {
	if d.p != nil {
		return d.p, nil
	}
	var (
		doc    []byte
		values map[string]json.RawMessage
		mp     map[string]any
	)
	switch d.Type {
	case serde.TypeJSON, typeSealed:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(d.CP, &m); err != nil {
			return nil, fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
		}
		if cv := m["channel_values"]; len(cv) > 0 && !bytes.Equal(cv, []byte("{}")) && !bytes.Equal(cv, []byte("null")) {
			if err := json.Unmarshal(cv, &values); err != nil {
				return nil, fmt.Errorf("%w: checkpoint %q: channel_values: %w", ErrDocument, d.ID, err)
			}
			m["channel_values"] = json.RawMessage("{}")
			b, err := json.Marshal(m)
			if err != nil {
				return nil, fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
			}
			doc = b
		} else {
			doc = d.CP
		}
	case typeMsgpack:
		v, err := serde.JSONPlus{}.LoadsTyped(typeMsgpack, d.CP)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: checkpoint %q is not a map", ErrDocument, d.ID)
		}
		mp, _ = m["channel_values"].(map[string]any)
		m["channel_values"] = map[string]any{}
		_, b, err := serde.JSONPlus{}.DumpsTyped(m)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
		}
		doc = b
	default:
		return nil, fmt.Errorf("%w: checkpoint %q of thread %q has type %q; memvault reads \"json\" (memvault, JS) and \"msgpack\" (Python) checkpoints",
			ErrDocument, d.ID, d.Thread, d.Type)
	}
	dec, err := engine.DecodeDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
	}
	p := &parsed{doc: doc, dec: dec}
	versions := dec.ChannelVersions()
	for _, ch := range slices.Sorted(maps.Keys(values)) {
		if ver, ok := versions[ch]; ok {
			p.inline = append(p.inline, checkpointer.ValueRow{Channel: ch, Version: ver, Type: serde.TypeJSON, Data: values[ch]})
		}
	}
	for _, ch := range slices.Sorted(maps.Keys(mp)) {
		ver, ok := versions[ch]
		if !ok {
			continue
		}
		typ, data, err := serde.MsgPack{}.DumpsTyped(mp[ch])
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint %q: channel %q: %w", ErrDocument, d.ID, ch, err)
		}
		if data == nil && typ != serde.TypeEmpty {
			data = []byte{}
		}
		p.inline = append(p.inline, checkpointer.ValueRow{Channel: ch, Version: ver, Type: typ, Data: data})
	}
	d.p = p
	return p, nil
}

// rows are the value rows of d: its inline values, overridden by
// memvault_values, by channel.
func (d *cpDoc) rows() ([]checkpointer.ValueRow, error) {
	if len(d.Values) > 0 && len(d.Keys) == len(d.Values) {
		// Nothing inline (sealed, or every value out of line).
		return d.valueRows(), nil
	}
	p, err := d.parse()
	if err != nil {
		return nil, err
	}
	if len(d.Values) == 0 {
		return p.inline, nil
	}
	out := d.valueRows()
	for _, r := range p.inline {
		if !slices.ContainsFunc(out, func(o checkpointer.ValueRow) bool { return o.Channel == r.Channel }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b checkpointer.ValueRow) int { return cmp.Compare(a.Channel, b.Channel) })
	return out, nil
}

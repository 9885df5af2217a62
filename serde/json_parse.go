package serde

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonParser is a strict RFC 8259 parser producing the generic values
// JSONPlus documents (integers as int64 / uint64 / *big.Int, other numbers
// as float64), plus the bare NaN, Infinity and -Infinity tokens Python's
// json.dumps writes. Objects with an "lc" key are revived as they close.
// Invalid UTF-8 in strings becomes U+FFFD, as with encoding/json.
type jsonParser struct {
	b   []byte
	off int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: json: "+format+" at offset %d", append([]any{ErrMalformed}, append(args, p.off)...)...)
}

func parseJSONValue(data []byte) (any, error) {
	p := jsonParser{b: data}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.off != len(p.b) {
		return nil, p.errorf("data after the value")
	}
	return v, nil
}

func (p *jsonParser) ws() {
	for p.off < len(p.b) {
		switch p.b[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(s string) bool {
	if len(p.b)-p.off >= len(s) && string(p.b[p.off:p.off+len(s)]) == s {
		p.off += len(s)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errTooDeep
	}
	if p.off >= len(p.b) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.b[p.off]; c {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		return p.str()
	case 't':
		if p.literal("true") {
			return true, nil
		}
	case 'f':
		if p.literal("false") {
			return false, nil
		}
	case 'n':
		if p.literal("null") {
			return nil, nil
		}
	case 'N':
		if p.literal("NaN") {
			return math.NaN(), nil
		}
	case 'I':
		if p.literal("Infinity") {
			return math.Inf(1), nil
		}
	default:
		if c == '-' && p.literal("-Infinity") {
			return math.Inf(-1), nil
		}
		if c == '-' || c >= '0' && c <= '9' {
			return p.number()
		}
	}
	return nil, p.errorf("unexpected character %q", p.b[p.off])
}

func (p *jsonParser) number() (any, error) {
	start := p.off
	isFloat := false
	if p.b[p.off] == '-' {
		p.off++
	}
	digits := func() int {
		n := 0
		for p.off < len(p.b) && p.b[p.off] >= '0' && p.b[p.off] <= '9' {
			p.off++
			n++
		}
		return n
	}
	switch {
	case p.off < len(p.b) && p.b[p.off] == '0':
		p.off++
	case digits() == 0:
		return nil, p.errorf("bad number")
	}
	if p.off < len(p.b) && p.b[p.off] == '.' {
		p.off++
		isFloat = true
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	if p.off < len(p.b) && (p.b[p.off] == 'e' || p.b[p.off] == 'E') {
		p.off++
		isFloat = true
		if p.off < len(p.b) && (p.b[p.off] == '+' || p.b[p.off] == '-') {
			p.off++
		}
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	s := string(p.b[start:p.off])
	if !isFloat {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	return parseNumber(s)
}

func (p *jsonParser) array(depth int) (any, error) {
	p.off++ // '['
	out := []any{}
	p.ws()
	if p.off < len(p.b) && p.b[p.off] == ']' {
		p.off++
		return out, nil
	}
	for {
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.ws()
		if p.off >= len(p.b) {
			return nil, p.errorf("unterminated array")
		}
		switch p.b[p.off] {
		case ',':
			p.off++
		case ']':
			p.off++
			return out, nil
		default:
			return nil, p.errorf("expected ',' or ']'")
		}
	}
}

func (p *jsonParser) object(depth int) (any, error) {
	p.off++ // '{'
	out := map[string]any{}
	p.ws()
	if p.off < len(p.b) && p.b[p.off] == '}' {
		p.off++
		return out, nil
	}
	for {
		p.ws()
		if p.off >= len(p.b) || p.b[p.off] != '"' {
			return nil, p.errorf("expected a string key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.off >= len(p.b) || p.b[p.off] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.off++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[k.(string)] = v
		p.ws()
		if p.off >= len(p.b) {
			return nil, p.errorf("unterminated object")
		}
		switch p.b[p.off] {
		case ',':
			p.off++
		case '}':
			p.off++
			if _, ok := out["lc"]; ok {
				return reviveLC(out)
			}
			return out, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *jsonParser) str() (any, error) {
	p.off++ // opening quote
	start := p.off
	ascii := true
	// Fast path: no escapes.
	for p.off < len(p.b) {
		c := p.b[p.off]
		if c == '"' {
			s := p.b[start:p.off]
			p.off++
			if ascii || utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil // invalid bytes -> U+FFFD
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, p.errorf("control character in string")
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
		p.off++
	}
	buf := append([]byte(nil), p.b[start:p.off]...)
	for p.off < len(p.b) {
		c := p.b[p.off]
		switch {
		case c == '"':
			p.off++
			if !utf8.Valid(buf) {
				return string([]rune(string(buf))), nil
			}
			return string(buf), nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.off++
			continue
		}
		p.off++
		if p.off >= len(p.b) {
			break
		}
		e := p.b[p.off]
		p.off++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, p.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(utf8.RuneError)
				save := p.off
				if p.literal(`\u`) {
					if x, ok := p.hex4(); ok {
						r2 = x
					}
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
				} else {
					r = utf8.RuneError
					p.off = save
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, p.errorf("bad escape \\%c", e)
		}
	}
	return nil, p.errorf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.b)-p.off < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.off : p.off+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.off += 4
	return r, true
}

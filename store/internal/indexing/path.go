package indexing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/memvault/memvault/store"
)

// tokenKind is the kind of one step of a field path.
type tokenKind uint8

const (
	tokField tokenKind = iota // a dict key
	tokIndex                  // [i] or [-i]
	tokAll                    // [*]: every list element
	tokStar                   // bare *: every dict value or list element
	tokGroup                  // {a,b.c}: several dotted sub-paths
)

// pathToken is one step of a Path.
type pathToken struct {
	kind   tokenKind
	name   string     // tokField
	index  int        // tokIndex
	fields [][]string // tokGroup: each sub-path as its dict keys
}

// Path is a parsed field path such as "a.b", "a[0].b", "a[*].b", "{a,b.c}"
// or "$" (the whole value). The zero Path is "$".
type Path struct {
	src    string
	tokens []pathToken
}

// String returns the path as it was written; vector field names are built
// from it.
func (p Path) String() string {
	if p.src == "" {
		return "$"
	}
	return p.src
}

// IsRoot reports whether the path selects the whole value ("$" or "").
func (p Path) IsRoot() bool { return len(p.tokens) == 0 }

// ParsePath parses a field path with LangGraph's syntax (reference §5.1):
//
//   - "$" or "" is the whole value;
//   - "a.b" descends into dict keys;
//   - "a[0]", "a[-1]" pick a list element (negative counts from the end);
//   - "a[*]" continues with every list element;
//   - a bare "*" continues with every dict value or list element;
//   - "{a,b.c}" (only as the last step) takes several dotted sub-paths of a
//     dict at once.
//
// LangGraph's tokenizer accepts anything and silently extracts nothing from
// malformed paths; ParsePath instead rejects them with ErrInvalidPath:
// unterminated or stray brackets and braces, non-integer indexes, empty
// steps ("a..b", "a."), empty or nested groups, and steps after a group
// (which LangGraph ignores). A path longer than store.MaxIDBytes is
// refused with store.ErrIDTooLong too.
func ParsePath(s string) (Path, error) {
	// The path names the vectors it yields (FieldText.Field), which
	// PostgreSQL keeps in an index: it is an identifier like a key.
	if err := store.CheckLength(store.ErrInvalidPath, "field path", s); err != nil {
		return Path{}, err
	}
	p := Path{src: s}
	if s == "" || s == "$" {
		return p, nil
	}
	bad := func(format string, args ...any) (Path, error) {
		return Path{}, fmt.Errorf("%w: %q: %s", store.ErrInvalidPath, s, fmt.Sprintf(format, args...))
	}
	i := 0
	// expectStep is true at the start and right after a '.', where a step
	// must follow.
	expectStep := true
	for i < len(s) {
		if n := len(p.tokens); n > 0 && p.tokens[n-1].kind == tokGroup {
			return bad("a {...} group must be the last step")
		}
		switch c := s[i]; c {
		case '.':
			if expectStep {
				return bad("empty step at byte %d", i)
			}
			expectStep = true
			i++
			if i == len(s) {
				return bad("path ends with '.'")
			}
			continue
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return bad("unterminated '['")
			}
			inner := s[i+1 : i+end]
			if inner == "*" {
				p.tokens = append(p.tokens, pathToken{kind: tokAll})
			} else {
				n, err := parseIndex(inner)
				if err != nil {
					return bad("index %q is not an integer or '*'", inner)
				}
				p.tokens = append(p.tokens, pathToken{kind: tokIndex, index: n})
			}
			i += end + 1
		case '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return bad("unterminated '{'")
			}
			inner := s[i+1 : i+end]
			if strings.ContainsAny(inner, "{[]") {
				return bad("groups hold dotted field names only")
			}
			var fields [][]string
			for _, f := range strings.Split(inner, ",") {
				f = strings.TrimSpace(f)
				parts := strings.Split(f, ".")
				for _, part := range parts {
					if part == "" {
						return bad("empty field in group %q", inner)
					}
				}
				fields = append(fields, parts)
			}
			p.tokens = append(p.tokens, pathToken{kind: tokGroup, fields: fields})
			i += end + 1
		case ']', '}', ',':
			return bad("unexpected %q at byte %d", c, i)
		default:
			if !expectStep {
				return bad("missing '.' before byte %d", i)
			}
			j := i
			for j < len(s) && !strings.ContainsRune(".[]{},", rune(s[j])) {
				j++
			}
			name := s[i:j]
			if name == "*" {
				p.tokens = append(p.tokens, pathToken{kind: tokStar})
			} else {
				p.tokens = append(p.tokens, pathToken{kind: tokField, name: name})
			}
			i = j
		}
		expectStep = false
	}
	return p, nil
}

// parseIndex accepts an optional '-' followed by decimal digits.
func parseIndex(s string) (int, error) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.Atoi(s)
}

// MustParsePath is ParsePath for paths known to be valid; it panics
// otherwise. Use it for constants only.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Texts returns the texts the path selects in value, formatted as
// LangGraph's get_text_at_path does: strings as they are, booleans "True" /
// "False", integers in decimal, floats as Python's repr ("1.0", "1e-05"),
// lists and dicts as json.dumps(sort_keys=True, ensure_ascii=False); nulls
// and missing fields yield nothing.
func (p Path) Texts(value map[string]any) []string {
	if p.IsRoot() {
		return []string{PythonJSON(value)}
	}
	return p.extract(nil, value, 0)
}

func (p Path) extract(out []string, obj any, pos int) []string {
	if pos == len(p.tokens) {
		if s, ok := leafText(obj); ok {
			out = append(out, s)
		}
		return out
	}
	tok := &p.tokens[pos]
	switch tok.kind {
	case tokField:
		if m, ok := asMap(obj); ok {
			if v, ok := m[tok.name]; ok {
				out = p.extract(out, v, pos+1)
			}
		}
	case tokIndex:
		if l, ok := asList(obj); ok {
			i := tok.index
			if i < 0 {
				i += len(l)
			}
			if i >= 0 && i < len(l) {
				out = p.extract(out, l[i], pos+1)
			}
		}
	case tokAll:
		if l, ok := asList(obj); ok {
			for _, v := range l {
				out = p.extract(out, v, pos+1)
			}
		}
	case tokStar:
		if m, ok := asMap(obj); ok {
			// Python iterates dicts in insertion order, which a Go map does
			// not keep; sorted keys are the stable choice.
			for _, k := range sortedKeys(m) {
				out = p.extract(out, m[k], pos+1)
			}
		} else if l, ok := asList(obj); ok {
			for _, v := range l {
				out = p.extract(out, v, pos+1)
			}
		}
	case tokGroup:
		m, ok := asMap(obj)
		if !ok {
			return out
		}
		for _, f := range tok.fields {
			var cur any = m
			found := true
			for _, k := range f {
				cm, ok := asMap(cur)
				if !ok {
					found = false
					break
				}
				if cur, ok = cm[k]; !ok {
					found = false
					break
				}
			}
			if !found {
				continue
			}
			if s, ok := leafText(cur); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// leafText formats a selected value; ok is false for null.
func leafText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	}
	v = NormalizeScalar(v)
	if v == nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "True", true
		}
		return "False", true
	default:
		var b strings.Builder
		writePythonJSON(&b, v)
		return b.String(), true
	}
}

// FieldText is one text to embed and the vector field name it is stored
// under.
type FieldText struct {
	// Field is the path as written, or "<path>.<i>" when the path yields
	// several texts.
	Field string
	// Text is the extracted, formatted text.
	Text string
}

// ExtractTexts returns the texts to embed for value under paths, named as
// LangGraph names vector fields. A nil paths means ["$"].
func ExtractTexts(value map[string]any, paths []string) ([]FieldText, error) {
	if paths == nil {
		paths = []string{"$"}
	}
	var out []FieldText
	for _, ps := range paths {
		p, err := ParsePath(ps)
		if err != nil {
			return nil, err
		}
		texts := p.Texts(value)
		if len(texts) == 1 {
			out = append(out, FieldText{Field: ps, Text: texts[0]})
			continue
		}
		for i, t := range texts {
			out = append(out, FieldText{Field: ps + "." + strconv.Itoa(i), Text: t})
		}
	}
	return out, nil
}

// ValidatePaths checks that every path parses.
func ValidatePaths(paths []string) error {
	for _, ps := range paths {
		if _, err := ParsePath(ps); err != nil {
			return err
		}
	}
	return nil
}

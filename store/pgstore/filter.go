package pgstore

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
)

// args collects positional parameters; every value from the caller,
// filter keys included, goes through it, never into the SQL text. (The one
// exception, a search prefix in a cached statement, is written as escapes
// only: see nsCondLiteral.)
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// nsCond is the condition "col is prefix or under it", as byte-wise ranges
// the text_pattern_ops index (store_prefix_idx) serves: "a.b" matches "a.b"
// and everything in ["a.b.", "a.b/"), '/' being the byte after '.'. There
// is no LIKE pattern, so no metacharacter to escape.
func nsCond(a *args, col string, prefix store.Namespace) string {
	if len(prefix) == 0 {
		return "TRUE"
	}
	p := prefix.String()
	return fmt.Sprintf("(%s = %s OR (%s ~>=~ %s AND %s ~<~ %s))",
		col, a.add(p), col, a.add(p+"."), col, a.add(p+"/"))
}

// filterSQL renders a validated filter as SQL over the JSONB column col,
// with the semantics of the store core's filter engine (store/internal/filtering): a missing key never matches;
// equality is JSONB equality (numbers by value); the ordering operators
// compare numbers as numeric and strings byte-wise (COLLATE "C"), and a
// field of another kind never matches. (LangGraph compares value->>'k' as
// text, where 9 > 10.)
func filterSQL(a *args, col string, filter map[string]any) (string, error) {
	if len(filter) == 0 {
		return "TRUE", nil
	}
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable SQL text, so prepared statements are reused
	var conds []string
	for _, k := range keys {
		cond := filter[k]
		if !textHolds(k) {
			// No JSONB object has such a key; an envelope row may, and
			// passes below.
			conds = append(conds, "FALSE")
			continue
		}
		ops, isOps := cond.(map[string]any)
		if !isOps {
			c, err := eqSQL(a, col, k, "=", cond)
			if err != nil {
				return "", err
			}
			conds = append(conds, c)
			continue
		}
		names := make([]string, 0, len(ops))
		for op := range ops {
			names = append(names, op)
		}
		sort.Strings(names)
		for _, op := range names {
			arg := ops[op]
			var c string
			var err error
			switch op {
			case filtering.OpEq:
				c, err = eqSQL(a, col, k, "=", arg)
			case filtering.OpNe:
				c, err = eqSQL(a, col, k, "<>", arg)
			case filtering.OpGt, filtering.OpGte, filtering.OpLt, filtering.OpLte:
				c, err = orderSQL(a, col, k, op, arg)
			default:
				err = fmt.Errorf("%w: field %q: unknown operator %q", store.ErrInvalidFilter, k, op)
			}
			if err != nil {
				return "", err
			}
			conds = append(conds, c)
		}
	}
	// A value JSONB cannot hold (one with U+0000) is kept in a plaintext
	// envelope (see driver.jsonb), whose fields these conditions cannot
	// see: such rows pass, and the engine's own filter, which checks every
	// row again after decoding, decides. Without this they were dropped
	// from every filtered search.
	return "((" + strings.Join(conds, " AND ") + ") OR (" + col + " -> '" + envelope.Marker + "') IS NOT NULL)", nil
}

// eqSQL: col->k is NULL (SQL) when k is missing, so neither = nor <>
// matches a missing key.
func eqSQL(a *args, col, k, op string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: field %q: %v", store.ErrInvalidFilter, k, err)
	}
	if !jsonbHolds(b) {
		// JSONB refuses the operand (22P05), or json.Marshal changed it
		// (U+FFFD for an invalid byte): the rows with the field pass,
		// and the engine's own filter decides (a FilterTx may leave rows
		// in).
		return fmt.Sprintf("(%s -> %s::text) IS NOT NULL", col, a.add(k)), nil
	}
	return fmt.Sprintf("(%s -> %s::text) %s %s::jsonb", col, a.add(k), op, a.add(string(b))), nil
}

var sqlOps = map[string]string{filtering.OpGt: ">", filtering.OpGte: ">=", filtering.OpLt: "<", filtering.OpLte: "<="}

func orderSQL(a *args, col, k, op string, v any) (string, error) {
	key := a.add(k)
	if s, ok := v.(string); ok {
		if !textHolds(s) {
			// PostgreSQL text cannot carry it (22021): every string
			// field passes and the engine's own filter decides.
			return fmt.Sprintf("(jsonb_typeof(%s -> %s::text) = 'string')", col, key), nil
		}
		return fmt.Sprintf("(CASE WHEN jsonb_typeof(%s -> %s::text) = 'string' THEN (%s ->> %s::text) COLLATE \"C\" %s %s::text ELSE false END)",
			col, key, col, key, sqlOps[op], a.add(s)), nil
	}
	n, err := numericText(v)
	if err != nil {
		return "", fmt.Errorf("%w: field %q: %s %v", store.ErrInvalidFilter, k, op, err)
	}
	return fmt.Sprintf("(CASE WHEN jsonb_typeof(%s -> %s::text) = 'number' THEN (%s -> %s::text)::numeric %s %s::numeric ELSE false END)",
		col, key, col, key, sqlOps[op], a.add(n)), nil
}

// numericText renders a number operand exactly, as PostgreSQL numeric input.
func numericText(v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		if _, ok := new(big.Rat).SetString(x.String()); !ok {
			return "", fmt.Errorf("bad number %q", x)
		}
		return x.String(), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("operand of type %T is not a number", v)
}

// textHolds reports whether PostgreSQL text (and so a JSONB string or
// key) can hold s exactly: valid UTF-8 without NUL. A filter key or
// operand it cannot hold is not sent to the server as is: before, the
// search failed with an SQL error (22021, 22P05) where every other
// backend answered.
func textHolds(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// jsonbHolds reports whether JSON text b, as json.Marshal wrote it, holds
// neither U+0000, which JSONB refuses, nor the \ufffd escape by which
// json.Marshal replaces an invalid UTF-8 byte (a valid U+FFFD it writes
// as is, unescaped). Outside strings JSON has no backslash, and inside
// them a backslash always starts an escape, so the scan is exact.
func jsonbHolds(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+5 < len(b) && b[i+1] == 'u' {
			if e := string(b[i+2 : i+6]); e == "0000" || e == "fffd" {
				return false
			}
		}
		i++ // the escaped character
	}
	return true
}

// nsCondLiteral is nsCond with the prefix written into the SQL text as
// escape-string constants instead of parameters, so that a cached prepared
// statement is planned knowing the prefix (see Store.preparedPrefix). ok
// is false when the prefix cannot be written so (see escapeLiteral).
func nsCondLiteral(col string, prefix store.Namespace) (cond string, ok bool) {
	if len(prefix) == 0 {
		return "TRUE", true
	}
	p := prefix.String()
	eq, ok := escapeLiteral(p)
	if !ok {
		return "", false
	}
	lo, _ := escapeLiteral(p + ".")
	hi, _ := escapeLiteral(p + "/")
	return fmt.Sprintf("(%s = %s OR (%s ~>=~ %s AND %s ~<~ %s))", col, eq, col, lo, col, hi), true
}

// escapeLiteral renders s as a PostgreSQL escape string constant made of
// escapes only: E'\x75\x73\U000000e9' for "usé". The SQL text holds hex
// digits and backslashes, never a character of s, so no quote, backslash or
// comment in s can end the constant, and the meaning does not depend on
// standard_conforming_strings. Non-ASCII characters are Unicode escapes,
// which the server converts to its encoding (a SQL_ASCII server refuses
// them: callers check the server encoding first). ok is false
// for invalid UTF-8 and for NUL, which PostgreSQL text cannot hold.
func escapeLiteral(s string) (lit string, ok bool) {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 3+4*len(s))
	b = append(b, "E'"...)
	for i, r := range s {
		switch {
		case r == 0 || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")):
			return "", false
		case r < utf8.RuneSelf:
			b = append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
		default:
			b = append(b, '\\', 'U')
			for shift := 28; shift >= 0; shift -= 4 {
				b = append(b, hex[(r>>shift)&0xf])
			}
		}
	}
	return string(append(b, '\'')), true
}

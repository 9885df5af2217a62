package vault

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
	"github.com/memvault/memvault/store/vecindex"
)

const dave = "Dave is allergic to shellfish and takes metformin for his asthma"

// copiedVectors is what an attacker holds of the store's vectors: a copy
// of the data taken before an erasure (a backup of the SQLite file, a
// data-only dump of store_vectors), by item.
type copiedVectors struct {
	vectors map[string][]float32 // "<namespace>/<key>" → vector
	codes   map[string][]byte    // SQLite's code blobs
	centre  []float32            // SQLite's codes' centre (nil: uncentred)
}

// forgottenSubjects is how many data subjects of TestForgottenSubjectsVectorsTellNothing
// hold carol's words and are forgotten: each has keys (so a vector space)
// of its own, so each is an independent trial of the attack.
const forgottenSubjects = 8

// TestForgottenSubjectsVectorsTellNothing plays issue 24's attack on
// erasure: carol's memory is stored under per-subject keys with the
// default (keyed hashing) embedder, by several subjects (carol-0 … carol-7,
// each with keys of its own), the data is copied, they are forgotten; the
// attacker then holds the copy, the master key (so the keyed embedder, and
// the public rotation of SQLite's codes) and the key table as it is after
// the erasure (dave's keys), and ranks a dictionary against each forgotten
// subject's copied vector and code, in the master key's space and in every
// space a remaining key selects. Before subjects had vector spaces of their
// own the top 8 held most of carol's words (4 or more of the 8 dictionary
// words her text contains, for each subject); now no more than chance.
//
// The test decides on the sum over the forgotten subjects, per attack and
// space, so that chance cannot fail it: 8 random guesses among the 244
// words hold 0.26 of carol's 8 on average (3 or more with probability
// 0.12%, which failed a single-subject version of this test once in
// 60 runs here); over 8 independent subjects the sum averages 2.0, with a
// variance as small (measured over 360 single rankings: mean 0.25,
// variance 0.26), so 16 or more has a probability under 1e-9, while the
// leak this test guards against gives 32 or more (42 and 48 measured). The
// same attack on dave's vector with dave's keys recovers his words: the
// attack works, the forgotten vectors just no longer mean anything.
func TestForgottenSubjectsVectorsTellNothing(t *testing.T) {
	dir := t.TempDir()
	sqliteCfg := config.Default()
	sqliteCfg.DBPath = filepath.Join(dir, "agent.db")
	pgCfg := config.Default()
	pgCfg.DSN = pgtest.SchemaDSN(t)
	pgCfg.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
	forgotten := make([]string, forgottenSubjects)
	for i := range forgotten {
		forgotten[i] = fmt.Sprintf("carol-%d", i)
	}
	for name, c := range map[string]config.Config{"sqlite": sqliteCfg, "postgres": pgCfg} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c.Keys.Primary = testkeys.Key
			c.Subjects.NamespacePrefix = []string{"users"}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			texts := map[string]string{"dave": dave}
			for _, s := range forgotten {
				texts[s] = carol
			}
			for ns, text := range texts {
				if err := h.Store.Put(ctx, store.Namespace{"users", ns, "health"}, "record", map[string]any{"text": text}); err != nil {
					t.Fatal(err)
				}
			}
			// Memories of no subject, enough for SQLite to centre its codes.
			r := rand.New(rand.NewPCG(1, 2))
			var ops []store.Op
			for i := range 1100 {
				words := make([]string, 6)
				for j := range words {
					words[j] = dictionary[6+r.IntN(len(dictionary)-6)]
				}
				ops = append(ops, store.PutOp{Namespace: store.Namespace{"kb"}, Key: fmt.Sprint(i), Value: map[string]any{"text": strings.Join(words, " ")}})
			}
			if _, err := h.Store.Batch(ctx, ops); err != nil {
				t.Fatal(err)
			}
			if hits, err := h.Store.Search(ctx, store.Namespace{"users", "carol-0"}, store.SearchOptions{Query: "peanut allergy"}); err != nil || len(hits) != 1 {
				t.Fatalf("carol's search: %v %v", hits, err)
			}
			stolen := copyVectors(t, h, c)
			for _, s := range forgotten {
				if _, err := h.Forget(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			if hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "metformin"}); err != nil || len(hits) != 1 || hits[0].Namespace[1] != "dave" {
				t.Fatalf("search after the erasure: %v %v", hits, err)
			}

			// The attacker's means: the keyed embedder of the master key,
			// and every rotation the key table still selects.
			keyed, err := config.ProtectedEmbedder(embeddings.NewUnkeyedHashing(256), h.Keyring.Primary())
			if err != nil {
				t.Fatal(err)
			}
			words, err := keyed.EmbedDocuments(ctx, dictionary)
			if err != nil {
				t.Fatal(err)
			}
			spaces := map[string][][]float32{"master key": words}
			daveRot, err := h.Keys.SubjectRotation(ctx, "dave", 256, false)
			if err != nil || daveRot == nil {
				t.Fatalf("dave's rotation: %v %v", daveRot, err)
			}
			spaces["dave's keys"] = rotateAll(t, daveRot, words)

			// The attack works: dave's copied vector gives his words away
			// to whoever holds his keys (and so would carol's, before).
			if v := stolen.vectors["users.dave.health/record"]; v == nil {
				t.Fatal("dave's vector was not copied")
			} else if g := rankWords(spaces["dave's keys"], v); recoveredFrom(dave, g) < 4 {
				t.Fatalf("the attack itself is broken: dave's vector with his keys gave %v", g)
			}

			// attack ranks the dictionary in every space against what was
			// copied of each forgotten subject, and fails when the words of
			// carol recovered over all of them are more than chance.
			attack := func(what string, rank func(ws [][]float32, item string) []string) {
				t.Helper()
				for space, ws := range spaces {
					total := 0
					for _, s := range forgotten {
						g := rank(ws, "users."+s+".health/record")
						total += recoveredFrom(carol, g)
						t.Logf("%s's %s against the %s: top 8 %v", s, what, space, g)
					}
					if total >= 2*forgottenSubjects {
						t.Errorf("the forgotten subjects' copied %ss, ranked in the %s's space, still give %d of carol's words away over %d subjects (chance: about %.1f)",
							what, space, total, forgottenSubjects, 0.26*forgottenSubjects)
					}
				}
			}
			attack("vector", func(ws [][]float32, item string) []string {
				v := stolen.vectors[item]
				if v == nil {
					t.Fatalf("%s's vector was not copied", item)
				}
				return rankWords(ws, v)
			})
			if name != "sqlite" {
				return
			}
			if stolen.centre == nil {
				t.Fatal("the codes' centre was not copied")
			}
			attack("code", func(ws [][]float32, item string) []string {
				code := stolen.codes[item]
				if code == nil {
					t.Fatalf("%s's code was not copied", item)
				}
				return rankByCode(t, ws, code, stolen.centre)
			})
			if g := rankByCode(t, spaces["dave's keys"], stolen.codes["users.dave.health/record"], stolen.centre); recoveredFrom(dave, g) < 3 {
				t.Fatalf("the code attack itself is broken: dave's code with his keys gave %v", g)
			}
		})
	}
}

// copyVectors copies what the data holds of the store's vectors: from a
// copy of the SQLite file (VACUUM INTO), or the store_vectors rows as a
// data-only dump has them.
func copyVectors(t *testing.T, h *Handle, c config.Config) copiedVectors {
	t.Helper()
	ctx := context.Background()
	out := copiedVectors{vectors: map[string][]float32{}, codes: map[string][]byte{}}
	if h.Pool != nil {
		rows, err := h.Pool.Query(ctx, `SELECT prefix, key, embedding::text FROM store_vectors`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var ns, key, text string
			if err := rows.Scan(&ns, &key, &text); err != nil {
				t.Fatal(err)
			}
			var v []float32
			for _, f := range strings.Split(strings.Trim(text, "[]"), ",") {
				x, err := strconv.ParseFloat(f, 32)
				if err != nil {
					t.Fatal(err)
				}
				v = append(v, float32(x))
			}
			out.vectors[ns+"/"+key] = v
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	bak := filepath.Join(t.TempDir(), "backup.db")
	if _, err := openRaw(t, c.DBPath).ExecContext(ctx, `VACUUM INTO '`+bak+`'`); err != nil {
		t.Fatal(err)
	}
	db := openRaw(t, bak)
	rows, err := db.Query(`SELECT prefix, key, embedding FROM store_vectors`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ns, key string
		var blob []byte
		if err := rows.Scan(&ns, &key, &blob); err != nil {
			t.Fatal(err)
		}
		out.vectors[ns+"/"+key] = floats(blob)
	}
	rows.Close()
	// A code's sign bits and its 8-bit part live in two tables; the
	// attacker joins them back into the format-3 code.
	withFine := 0
	rows, err = db.Query(`SELECT c.prefix, c.key, c.code, f.fine FROM store_vector_codes c
		LEFT JOIN store_vector_fine f ON f.prefix = c.prefix AND f.key = c.key AND f.field_name = c.field_name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ns, key string
		var code, fine []byte
		if err := rows.Scan(&ns, &key, &code, &fine); err != nil {
			t.Fatal(err)
		}
		out.codes[ns+"/"+key] = vecindex.JoinCode(nil, code, fine)
		if fine != nil {
			withFine++
		}
	}
	if withFine == 0 && len(out.codes) > 0 {
		t.Fatal("no stored code has its 8-bit part: the attack would read sign bits only")
	}
	rows.Close()
	var centre []byte
	if err := db.QueryRow(`SELECT centre FROM store_vector_quant`).Scan(&centre); err != nil {
		t.Fatal(err)
	}
	out.centre = floats(centre)
	return out
}

// floats decodes little-endian float32s.
func floats(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func rotateAll(t *testing.T, r *embeddings.Rotation, vs [][]float32) [][]float32 {
	t.Helper()
	out := make([][]float32, len(vs))
	for i, v := range vs {
		var err error
		if out[i], err = r.Apply(v); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// rankWords ranks the dictionary, whose vectors are words, by their dot
// product with a stored vector, and returns the best 8.
func rankWords(words [][]float32, stored []float32) []string {
	scores := make([]float64, len(words))
	for i, w := range words {
		for j := range w {
			scores[i] += float64(w[j]) * float64(stored[j])
		}
	}
	return top8(scores)
}

// rankByCode ranks the dictionary against a SQLite code, as whoever knows
// its format (public) would: the code holds the signs of R(v - c), R the
// codes' public rotation and c the stored centre, and since format 3 an
// 8-bit quantization of R(v - c) itself (levels n_i, step Δ: r_i ≈
// (n_i - 127.5)·Δ), the stronger attack; a word w scores the correlation
// of those signs, or of that quantized vector, with R(w - c).
func rankByCode(t *testing.T, words [][]float32, code []byte, centre []float32) []string {
	t.Helper()
	const header = 14
	d := len(words[0])
	signs := 8 * ((d + 63) / 64)
	var levels []byte
	var delta float64
	switch {
	case code[0] == 2 && len(code) == header+signs:
	case code[0] == 3 && len(code) == header+signs+8+d:
		fine := code[header+signs:]
		delta = float64(math.Float32frombits(binary.LittleEndian.Uint32(fine)))
		levels = fine[8:]
	default:
		t.Fatalf("a code of %d bytes, format %d", len(code), code[0])
	}
	seed := sha256.Sum256([]byte("memvault store/sqlitestore code rotation v2"))
	rot, err := embeddings.NewRotation(seed[:], d)
	if err != nil {
		t.Fatal(err)
	}
	centred := code[1]&1 != 0
	scores := make([]float64, len(words))
	for i, w := range words {
		u := slices.Clone(w)
		if centred {
			for j := range u {
				u[j] -= centre[j]
			}
		}
		x, err := rot.Apply(u)
		if err != nil {
			t.Fatal(err)
		}
		var dot, norm float64
		for j, f := range x {
			switch {
			case levels != nil:
				dot += (float64(levels[j]) - 127.5) * delta * float64(f)
			case binary.LittleEndian.Uint64(code[header+8*(j/64):])>>(uint(j)%64)&1 == 1:
				dot += float64(f)
			default:
				dot -= float64(f)
			}
			norm += float64(f) * float64(f)
		}
		if norm > 0 {
			scores[i] = dot / math.Sqrt(norm)
		}
	}
	return top8(scores)
}

// top8 returns the 8 dictionary words of highest score.
func top8(scores []float64) []string {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if scores[a] != scores[b] {
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(dictionary[a], dictionary[b])
	})
	out := make([]string, 8)
	for i := range out {
		out[i] = dictionary[idx[i]]
	}
	return out
}

// recoveredFrom counts the words of text (longer than 3 letters) among
// guesses.
func recoveredFrom(text string, guesses []string) int {
	n := 0
	for _, g := range guesses {
		if len(g) > 3 && strings.Contains(strings.ToLower(text), g) {
			n++
		}
	}
	return n
}

// TestSubjectVectorsFromBeforeSpaces: a store whose data subjects' vectors
// were written before subjects had vector spaces of their own (all in the
// shared space, the store's record without "+subjects:…") opens with a
// warning naming the command that fixes it, still answers searches across
// and within subjects, and after Reembed holds carol's vector in her space:
// reopened without warning, with the same results, and her copied vector
// no longer gives her words to the master key.
func TestSubjectVectorsFromBeforeSpaces(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "old.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.NamespacePrefix = []string{"users"}
	ring, err := c.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := config.ProtectedEmbedder(embeddings.NewUnkeyedHashing(256), ring.Primary())
	if err != nil {
		t.Fatal(err)
	}

	// The old store, as a build before subjects' spaces wrote it: the
	// subjects' values under their keys, their vectors in the shared space.
	table, err := sqlitekeys.Open(ctx, c.DBPath+".keys")
	if err != nil {
		t.Fatal(err)
	}
	hier, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: table, Subjects: c.Subjects})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(ctx, c.DBPath, sqlitestore.Options{Serde: hier, Index: &store.IndexConfig{Embedder: keyed,
		Fields: []string{"$"}, Distance: store.Cosine, DangerousSharedSubjectVectors: true}})
	if err != nil {
		t.Fatal(err)
	}
	for ns, text := range map[string]string{"carol": carol, "dave": dave} {
		if err := st.Put(ctx, store.Namespace{"users", ns, "health"}, "record", map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(ctx, store.Namespace{"kb"}, "faq", map[string]any{"text": "how to reset a password"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	table.Close()
	shared := storedVectorOf(t, c.DBPath, "users.carol.health")
	if g := rankWords(mustEmbed(t, keyed), shared); recoveredFrom(carol, g) < 4 {
		t.Fatalf("the old store's vector should give carol's words away: %v", g)
	}

	search := func(h *Handle) string {
		t.Helper()
		var out []string
		for _, q := range []struct {
			prefix store.Namespace
			query  string
		}{{nil, "peanut allergy"}, {store.Namespace{"users"}, "shellfish"}, {store.Namespace{"users", "carol"}, "insulin"}, {store.Namespace{"kb"}, "password"}} {
			hits, err := h.Store.Search(ctx, q.prefix, store.SearchOptions{Query: q.query})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range hits {
				out = append(out, fmt.Sprintf("%s/%s=%.5f", it.Namespace, it.Key, *it.Score))
			}
			out = append(out, "|")
		}
		return strings.Join(out, " ")
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "memvault store reembed") || !strings.Contains(h.Warnings[0], "shared space") || !h.NeedsReembed() {
		t.Fatalf("warnings %q, NeedsReembed %v", h.Warnings, h.NeedsReembed())
	}
	before := search(h)
	if !strings.HasPrefix(before, "users.carol.health/record=") {
		t.Fatalf("searches of the old store: %s", before)
	}
	if n, err := h.Reembed(ctx, store.ReembedOptions{}); err != nil || n != 3 {
		t.Fatalf("Reembed = %d, %v", n, err)
	}
	h.Close()
	// 5 or more of carol's 8 words among 8 random guesses: probability
	// under 1e-6 (the shared vector gives all 8).
	reembedded := storedVectorOf(t, c.DBPath, "users.carol.health")
	if g := rankWords(mustEmbed(t, keyed), reembedded); recoveredFrom(carol, g) >= 5 {
		t.Fatalf("after Reembed carol's vector still gives her words away: %v", g)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Exactly: the vector now is the shared one in carol's space.
	rot, err := h.Keys.SubjectRotation(ctx, "carol", len(shared), false)
	if err != nil || rot == nil {
		t.Fatalf("carol's rotation: %v, %v", rot, err)
	}
	want, err := rot.Apply(shared)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(float64(want[i]-reembedded[i])) > 1e-5 {
			t.Fatalf("after Reembed carol's vector is not her shared one in her space: value %d is %v, want %v", i, reembedded[i], want[i])
		}
	}
	if len(h.Warnings) != 0 || h.NeedsReembed() {
		t.Fatalf("after Reembed: warnings %q", h.Warnings)
	}
	if after := search(h); after != before {
		t.Fatalf("searches after Reembed:\n%s\nbefore:\n%s", after, before)
	}
}

func mustEmbed(t *testing.T, e embeddings.Embedder) [][]float32 {
	t.Helper()
	vs, err := e.EmbedDocuments(context.Background(), dictionary)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// storedVectorOf reads the vector of the item of namespace ns from the
// SQLite file.
func storedVectorOf(t *testing.T, path, ns string) []float32 {
	t.Helper()
	var blob []byte
	if err := openRaw(t, path).QueryRow(`SELECT embedding FROM store_vectors WHERE prefix = ?`, ns).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	return floats(blob)
}

// TestSubjectSpacesNeedSubjects: a store whose subjects' vectors are in
// spaces of their own does not open with per-subject keys off (its
// subjects' vectors could not be searched), and the error says what to
// set.
func TestSubjectSpacesNeedSubjects(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "s.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.NamespacePrefix = []string{"tenants", "users"}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"tenants", "users", "carol"}, "k", map[string]any{"text": carol}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	c.Subjects.NamespacePrefix = nil
	_, err = Open(ctx, c)
	if !errors.Is(err, store.ErrEmbedderMismatch) || !strings.Contains(err.Error(), "MEMVAULT_SUBJECT_NAMESPACE=tenants.users") {
		t.Fatalf("open with per-subject keys off: %v", err)
	}
}

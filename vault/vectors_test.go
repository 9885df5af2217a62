package vault

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
)

const carol = "Carol is allergic to peanuts and takes insulin for her diabetes"

// dictionary is the attacker's word list: the memory's words among a few
// hundred common English words.
var dictionary = strings.Fields(`carol allergic peanuts takes insulin diabetes
the be to of and a in that have it for not on with he as you do at this but his by from they we say her she or an will my one all would there
their what so up out if about who get which go me when make can like time no just him know take people into year your good some could them see
other than then now look only come its over think also back after use two how our work first well way even new want because any these give day
most us alice bob dave eve frank grace heidi peanut milk egg wheat soy shellfish fish penicillin aspirin metformin statin asthma cancer
hypertension depression anxiety arthritis migraine flu fever cough pain heart kidney liver lung blood sugar pressure doctor nurse hospital clinic
appointment prescription dose daily weekly monthly morning evening email phone call letter address street city berlin paris london invoice
order payment refund bank account card loan mortgage salary tax contract lawyer court case judge claim insurance policy premium plan customer
support ticket password login reset shipping delivery package weather music movie book travel flight hotel dinner lunch coffee tea water wine
beer sport football tennis running walking family child mother father sister brother wife husband friend school university job manager team
project meeting report deadline budget price cost sale discount coupon gift birthday holiday christmas summer winter spring autumn`)

// topWords ranks the dictionary by cosine against a stored vector, as an
// attacker holding the database and the public embedder would.
func topWords(t *testing.T, e embeddings.Embedder, stored []float32, k int) []string {
	t.Helper()
	vecs, err := e.EmbedDocuments(context.Background(), dictionary)
	if err != nil {
		t.Fatal(err)
	}
	type scored struct {
		w string
		s float64
	}
	var all []scored
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(stored[j])
		}
		all = append(all, scored{dictionary[i], d})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return strings.Compare(a.w, b.w)
	})
	var out []string
	for _, s := range all[:k] {
		out = append(out, s.w)
	}
	return out
}

// recovered counts the memory's words among guesses.
func recovered(guesses []string) int {
	n := 0
	for _, g := range guesses {
		if strings.Contains(strings.ToLower(carol), g) && len(g) > 3 {
			n++
		}
	}
	return n
}

func storedVector(t *testing.T, path string) []float32 {
	t.Helper()
	var blob []byte
	if err := openRaw(t, path).QueryRow(`SELECT embedding FROM store_vectors`).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(blob)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	return v
}

// TestDictionaryAttackOnStoredVectors plays the attack of issue 13 against
// a default configuration with a key: the attacker reads the stored vector
// from the SQLite file and ranks a word list with the public embedder.
// Against the public embedder's vectors (what memvault stored before) the
// top 8 hold most of the memory's words; against the keyed embedder and
// against sealed vectors, no more than chance: with 6 of the memory's words
// (longer than 3 letters) among ~300, 8 random guesses hold 0.16 of them on
// average, and 2 or more with probability under 1%.
func TestDictionaryAttackOnStoredVectors(t *testing.T) {
	ctx := context.Background()
	public := embeddings.NewUnkeyedHashing(256)
	key := "0123456789abcdef0123456789abcdef"

	// Before: the public embedder's vectors give the words away.
	leaky := filepath.Join(t.TempDir(), "leaky.db")
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return key, true })
	enc, _ := serde.NewEncrypted(nil, ring)
	st, err := sqlitestore.Open(ctx, leaky, sqlitestore.Options{Index: &store.IndexConfig{Embedder: public, Dims: 256, Fields: []string{"$"}}, Serde: enc})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, store.Namespace{"users", "carol"}, "health", map[string]any{"text": carol}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	guesses := topWords(t, public, storedVector(t, leaky), 8)
	if n := recovered(guesses); n < 4 {
		t.Fatalf("the attack itself is broken: public vectors gave only %d words (%v)", n, guesses)
	}
	t.Logf("public embedder: top 8 %v", guesses)

	// Now: the default configuration with a key keys the embedder.
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "keyed.db")
	c.Keys.Primary = key
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "health", map[string]any{"text": carol}); err != nil {
		t.Fatal(err)
	}
	hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "peanut allergy"})
	if err != nil || len(hits) != 1 || hits[0].Score == nil || *hits[0].Score < 0.1 {
		t.Fatalf("search with the keyed embedder: %v %v", hits, err)
	}
	h.Close()
	guesses = topWords(t, public, storedVector(t, c.DBPath), 8)
	if n := recovered(guesses); n >= 2 {
		t.Fatalf("keyed vectors still give %d words away: %v", n, guesses)
	}
	t.Logf("keyed embedder: top 8 %v", guesses)

	// Sealing, for models that cannot be keyed (here the public hashing
	// embedder stands for a public neural model).
	sealed, err := config.ProtectedEmbedder(openAILike{public}, ring.Primary())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := sealed.EmbedQuery(ctx, carol)
	guesses = topWords(t, public, v, 8)
	if n := recovered(guesses); n >= 2 {
		t.Fatalf("sealed vectors still give %d words away: %v", n, guesses)
	}
	t.Logf("sealed vectors: top 8 %v", guesses)
}

// openAILike hides that an embedder is the hashing one, so that
// ProtectedEmbedder seals it as it would a neural model.
type openAILike struct{ embeddings.Embedder }

// TestSealingKeepsSearchResults: the same items searched with the same
// queries through a sealed and an unsealed embedder give the same keys in
// the same order with the same scores (up to float32 rounding).
func TestSealingKeepsSearchResults(t *testing.T) {
	ctx := context.Background()
	public := embeddings.NewUnkeyedHashing(256)
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return "0123456789abcdef0123456789abcdef", true })
	sealed, err := config.ProtectedEmbedder(openAILike{public}, ring.Primary())
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{carol, "prefers email over phone", "order shipped to Berlin", "invoice in euros", "password reset twice",
		"allergic to shellfish", "takes metformin daily", "appointment on Monday morning", "refund for order 1234", "lives in Paris"}
	search := func(e embeddings.Embedder) []store.SearchItem {
		st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{Index: &store.IndexConfig{Embedder: e, Dims: 256, Fields: []string{"text"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for i, d := range docs {
			if err := st.Put(ctx, store.Namespace{"m"}, string(rune('a'+i)), map[string]any{"text": d}); err != nil {
				t.Fatal(err)
			}
		}
		var all []store.SearchItem
		for _, q := range []string{"peanut allergy", "how to contact", "order", "medication", "where does she live"} {
			hits, err := st.Search(ctx, store.Namespace{"m"}, store.SearchOptions{Query: q, Limit: len(docs)})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, hits...)
		}
		return all
	}
	plain, seal := search(public), search(sealed)
	if len(plain) != len(seal) {
		t.Fatalf("%d results unsealed, %d sealed", len(plain), len(seal))
	}
	// Same scores at every rank; same keys, except that items tied on
	// their score (within rounding) may trade places.
	tied := func(i int) bool {
		for j := range plain {
			if j != i && j/len(docs) == i/len(docs) && math.Abs(*plain[j].Score-*plain[i].Score) < 1e-5 {
				return true
			}
		}
		return false
	}
	for i := range plain {
		if math.Abs(*plain[i].Score-*seal[i].Score) > 1e-5 || (plain[i].Key != seal[i].Key && !tied(i)) {
			t.Fatalf("result %d: unsealed %s %.6f, sealed %s %.6f", i, plain[i].Key, *plain[i].Score, seal[i].Key, *seal[i].Score)
		}
	}
}

// TestPublicVectorsStoreKeepsWorking: a store whose vectors the public
// embedder made (before vector protection) opens with a warning naming
// the command that fixes it, still answers searches, and after Reembed is
// keyed: reopened without warning, with the same results.
func TestPublicVectorsStoreKeepsWorking(t *testing.T) {
	ctx := context.Background()
	key := "0123456789abcdef0123456789abcdef"
	path := filepath.Join(t.TempDir(), "old.db")
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return key, true })
	enc, _ := serde.NewEncrypted(nil, ring)
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256), Dims: 256, Fields: []string{"$"}}, Serde: enc})
	if err != nil {
		t.Fatal(err)
	}
	for k, text := range map[string]string{"health": carol, "contact": "prefers email over phone", "ship": "order shipped to Berlin"} {
		if err := st.Put(ctx, store.Namespace{"users", "carol"}, k, map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	c := config.Default()
	c.DBPath, c.Keys.Primary = path, key
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "memvault store reembed") || !h.NeedsReembed() {
		t.Fatalf("warnings %q, NeedsReembed %v", h.Warnings, h.NeedsReembed())
	}
	before, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "peanut allergy"})
	if err != nil || len(before) != 3 || before[0].Key != "health" {
		t.Fatalf("search on the old store: %v %v", before, err)
	}
	n, err := h.Reembed(ctx, store.ReembedOptions{BatchSize: 2})
	if err != nil || n != 3 {
		t.Fatalf("Reembed = %d, %v", n, err)
	}
	h.Close()
	oldVec := storedVector(t, path)
	if got := recovered(topWords(t, embeddings.NewUnkeyedHashing(256), oldVec, 8)); got >= 2 {
		t.Fatalf("after Reembed the vectors still give %d words away", got)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(h.Warnings) != 0 || h.NeedsReembed() {
		t.Fatalf("after Reembed: warnings %q", h.Warnings)
	}
	after, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "peanut allergy"})
	if err != nil || len(after) != 3 || after[0].Key != "health" {
		t.Fatalf("search after Reembed: %v %v", after, err)
	}
	// Another key: refused, not silently searched with meaningless
	// vectors, naming the key the vectors were made under.
	c.Keys.Primary = "fedcba9876543210fedcba9876543210"
	c.DangerousAllowPlaintext = true
	if _, err := Open(ctx, c); !errors.Is(err, ErrKeyNotLoaded) || !strings.Contains(err.Error(), "the store's vectors were made under key") {
		t.Fatalf("open with another key: %v, want ErrKeyNotLoaded", err)
	}
}

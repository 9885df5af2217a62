package embeddings

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// paraphrases pairs an anchor with a rewording of it: different word order,
// inflections, spelling variants, added or dropped function words, but the
// same content. Every other sentence in the test is unrelated to the anchor.
var paraphrases = [][2]string{
	{"The user prefers dark mode in the editor.", "In the editor, dark mode is what this user prefers."},
	{"Deploy the billing service to production on Friday.", "On Friday the billing service gets deployed to production."},
	{"My flight to Berlin was cancelled because of the storm.", "The storm cancelled my Berlin flight."},
	{"She is allergic to peanuts and shellfish.", "Peanut and shellfish allergies: she has both."},
	{"Remind me to renew my passport next month.", "Next month, remember to renew the passport."},
	{"The database migration failed with a timeout error.", "Timeout errors made the database migrations fail."},
	{"Our team meets every Tuesday at ten o'clock.", "Every Tuesday at ten the team has its meeting."},
	{"He's learning to play the piano on weekends.", "On weekends he learns piano playing."},
	{"The quarterly revenue grew by twelve percent.", "Revenue for the quarter grew twelve percent."},
	{"Encrypt every backup with a rotating key.", "Backups are encrypted, each with rotated keys."},
	{"The café on Rue de Rivoli serves excellent crêpes.", "Excellent crepes are served at the cafe on rue de Rivoli."},
	{"Tokyo's subway system is crowded in the morning.", "In the mornings the Tokyo subway is very crowded."},
	{"Water the tomato plants twice a week in summer.", "In summer, tomato plants need watering twice weekly."},
	{"The invoice total does not include shipping costs.", "Shipping costs aren't included in the invoice total."},
}

// unrelated sentences share function words and sentence shapes with the
// anchors but none of their content.
var unrelated = []string{
	"The cat is sleeping on the warm windowsill.",
	"It was raining all day, so we stayed at home.",
	"Please send me the slides before the lecture.",
	"A good night's sleep improves your memory.",
	"They bought a new car with a sunroof.",
	"What is the capital of Australia?",
	"The orchestra played Beethoven's ninth symphony.",
	"I have been reading a novel about pirates.",
	"Mount Everest is the highest mountain on Earth.",
	"The children built a sandcastle at the beach.",
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func TestHashingRanksParaphrasesAboveUnrelated(t *testing.T) {
	for _, dims := range []int{256, 1024} {
		h := NewUnkeyedHashing(dims)
		var margins, paraSims []float64
		for i, p := range paraphrases {
			anchor := h.Embed(p[0])
			para := cosine(anchor, h.Embed(p[1]))
			// Everything else is unrelated to this anchor: the fixed
			// distractors and both sentences of every other pair.
			var others []string
			others = append(others, unrelated...)
			for j, q := range paraphrases {
				if j != i {
					others = append(others, q[0], q[1])
				}
			}
			best, bestText := math.Inf(-1), ""
			for _, o := range others {
				if s := cosine(anchor, h.Embed(o)); s > best {
					best, bestText = s, o
				}
			}
			if para <= best {
				t.Errorf("dims %d: %q: paraphrase scores %.3f, not above unrelated %q at %.3f",
					dims, p[0], para, bestText, best)
			}
			margins = append(margins, para-best)
			paraSims = append(paraSims, para)
		}
		t.Logf("dims %d: %d anchors, paraphrase cosine mean %.3f (min %.3f); margin over best unrelated mean %.3f (min %.3f)",
			dims, len(paraphrases), mean(paraSims), minOf(paraSims), mean(margins), minOf(margins))
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// goldenText is embedded at goldenDims; its first components are pinned
// below. They were produced by this implementation, checked by hand to be
// unit-norm and non-degenerate, and must never change: stored vectors would
// silently stop matching new queries.
const (
	goldenText = "Agents remember: the user’s café order is a flat white (no sugar), ＦＵＬＬ-width & naïve."
	goldenDims = 64
)

var goldenPrefix = []uint32{
	0x3d67de2d, // 0.056608368
	0x00000000, // 0
	0x3de7de2d, // 0.113216735
	0xbe9a941e, // -0.3019113
	0xbd67de2d, // -0.056608368
	0xbec13925, // -0.3773891
	0x3d67de2d, // 0.056608368
	0x00000000, // 0
}

// goldenCorpusSum is the SHA-256 of every vector of the test corpus at 256
// dimensions, as little-endian float32 bits in corpus order. It pins all
// components of many texts, not only a prefix of one.
const goldenCorpusSum = "5187db6a351d792ba5d32b5ceafe57d1c208e11f1654d5f2f5ced510958f2185"

func TestHashingGoldenPrefix(t *testing.T) {
	v := NewUnkeyedHashing(goldenDims).Embed(goldenText)
	for i, want := range goldenPrefix {
		if got := math.Float32bits(v[i]); got != want {
			t.Errorf("component %d = %#08x (%v), want %#08x (%v)", i, got, v[i], want, math.Float32frombits(want))
		}
	}
}

func TestHashingGoldenCorpus(t *testing.T) {
	h := NewUnkeyedHashing(256)
	sum := sha256.New()
	var b [4]byte
	for _, text := range corpus() {
		for _, x := range h.Embed(text) {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			sum.Write(b[:])
		}
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != goldenCorpusSum {
		t.Errorf("corpus vectors changed: SHA-256 %s, want %s", got, goldenCorpusSum)
	}
}

// corpus returns every sentence of the test corpus in a fixed order.
func corpus() []string {
	texts := []string{goldenText}
	for _, p := range paraphrases {
		texts = append(texts, p[0], p[1])
	}
	return append(texts, unrelated...)
}

func TestHashingUnitNormAndDeterministic(t *testing.T) {
	h := NewUnkeyedHashing(128)
	for _, text := range corpus() {
		v := h.Embed(text)
		if len(v) != 128 {
			t.Fatalf("len = %d, want 128", len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: squared norm %v, want 1", text, n)
		}
		w := h.Embed(text)
		for i := range v {
			if math.Float32bits(v[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%q: component %d differs between runs", text, i)
			}
		}
	}
}

func TestHashingZeroVector(t *testing.T) {
	h := NewUnkeyedHashing(32)
	for _, text := range []string{"", "   ", "?!... --- ;;", "\u0301\u0301"} {
		v := h.Embed(text)
		if len(v) != 32 {
			t.Fatalf("%q: len = %d", text, len(v))
		}
		for i, x := range v {
			if x != 0 {
				t.Fatalf("%q: component %d = %v, want zero vector", text, i, x)
			}
		}
	}
}

func TestHashingNormalisation(t *testing.T) {
	h := NewUnkeyedHashing(256)
	same := [][2]string{
		{"Hello, World!", "hello world"},
		{"CAFÉ crème brûlée", "cafe creme brulee"},
		{"cafe\u0301", "café"},         // decomposed accent
		{"ＡＢＣ ｄｅｆ １２３", "abc def 123"}, // full-width forms
		{"ﬁnal ﬂow", "final flow"},     // ligatures
		{"don’t stop", "don't stop"},   // typographic apostrophe
		{"Straße", "strasse"},          // sharp s
		{"the cat", "cat"},             // stop words
		{"  tabs\tand\nnewlines  ", "tabs newlines"},
	}
	for _, p := range same {
		a, b := h.Embed(p[0]), h.Embed(p[1])
		if c := cosine(a, b); math.Abs(c-1) > 1e-6 {
			t.Errorf("%q vs %q: cosine %v, want 1", p[0], p[1], c)
		}
	}
	// Only stop words: the words themselves are used rather than nothing.
	if v := h.Embed("to be or not to be"); cosine(v, v) == 0 {
		t.Error("stop-word-only text gave the zero vector")
	}
	// Word order matters through bigrams, but only a little.
	a, b := h.Embed("dog bites man"), h.Embed("man bites dog")
	if c := cosine(a, b); c >= 1-1e-6 || c < 0.5 {
		t.Errorf("reordered words: cosine %v, want in [0.5, 1)", c)
	}
	// Scripts without spaces still get overlapping features.
	if c := cosine(h.Embed("東京の地下鉄は混雑している"), h.Embed("東京の地下鉄")); c < 0.3 {
		t.Errorf("Japanese prefix: cosine %v, want >= 0.3", c)
	}
}

func TestNewHashingDims(t *testing.T) {
	for _, tc := range []struct {
		in, dims int
		name     string
	}{{0, DefaultHashingDims, "hash:256"}, {-3, DefaultHashingDims, "hash:256"}, {1, 1, "hash:1"}, {1536, 1536, "hash:1536"}} {
		h := NewUnkeyedHashing(tc.in)
		if h.Dims() != tc.dims || h.Name() != tc.name {
			t.Errorf("NewUnkeyedHashing(%d): Dims %d Name %q, want %d %q", tc.in, h.Dims(), h.Name(), tc.dims, tc.name)
		}
		if v := h.Embed("one dimension is still unit norm"); len(v) != tc.dims {
			t.Errorf("NewUnkeyedHashing(%d): len %d", tc.in, len(v))
		}
	}
}

func TestHashingEmbedderInterface(t *testing.T) {
	h := NewUnkeyedHashing(64)
	ctx := context.Background()
	texts := []string{"alpha beta", "", "gamma"}
	vs, err := h.EmbedDocuments(ctx, texts)
	if err != nil || len(vs) != len(texts) {
		t.Fatalf("EmbedDocuments: %d vectors, err %v", len(vs), err)
	}
	q, err := h.EmbedQuery(ctx, "alpha beta")
	if err != nil || cosine(q, vs[0]) < 1-1e-6 {
		t.Fatalf("EmbedQuery differs from EmbedDocuments: err %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.EmbedDocuments(cctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("EmbedDocuments on cancelled ctx: err %v", err)
	}
	if _, err := h.EmbedQuery(cctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("EmbedQuery on cancelled ctx: err %v", err)
	}
}

func FuzzHashing(f *testing.F) {
	for _, s := range append([]string{"", goldenText, "\xff\xfe", "a", "東京", strings.Repeat("x", 300)}, unrelated...) {
		f.Add(s)
	}
	h := NewUnkeyedHashing(48)
	f.Fuzz(func(t *testing.T, s string) {
		v := h.Embed(s)
		if len(v) != 48 {
			t.Fatalf("len %d", len(v))
		}
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite component %v", x)
			}
			n += float64(x) * float64(x)
		}
		if n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("squared norm %v, want 0 or 1", n)
		}
		w := h.Embed(s)
		for i := range v {
			if math.Float32bits(v[i]) != math.Float32bits(w[i]) {
				t.Fatal("not deterministic")
			}
		}
	})
}

func TestStemLen(t *testing.T) {
	groups := [][]string{
		{"query", "queries"},
		{"store", "stored", "storing", "stores"},
		{"deploy", "deployed", "deploying", "deploys"},
		{"cat", "cats"},
		{"make", "makes", "making"},
		{"study", "studies", "studied", "studying"},
	}
	for _, g := range groups {
		stem := g[0][:stemLen([]byte(g[0]))]
		for _, w := range g[1:] {
			if got := w[:stemLen([]byte(w))]; got != stem {
				t.Errorf("stem of %q = %q, want %q (as %q)", w, got, stem, g[0])
			}
		}
	}
	for _, w := range []string{"class", "status", "analysis", "is", "bus"} {
		if n := stemLen([]byte(w)); n != len(w) {
			t.Errorf("%q stemmed to %q", w, w[:n])
		}
	}
}

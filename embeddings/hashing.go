package embeddings

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

// DefaultHashingDims is the dimension NewUnkeyedHashing uses when it is given a
// non-positive value.
const DefaultHashingDims = 256

// Feature weights of the three hashed channels. A word's unigram weighs 1;
// the bigram of two adjacent content words and each character n-gram weigh
// less, so that exact word overlap dominates while shared stems, spelling
// variants and word order still count.
const (
	unigramWeight  = 1.0
	bigramWeight   = 0.6
	chargramWeight = 0.3
)

// Character n-gram sizes, counted in runes of the word wrapped in the
// boundary markers '<' and '>'.
const (
	minGram = 3
	maxGram = 5
)

// Channel tags keep equal strings of different channels (the unigram "cat"
// and the character trigram "cat") in different hash spaces.
const (
	tagUnigram  = 'u'
	tagBigram   = 'b'
	tagChargram = 'c'
)

// Hashing is a deterministic, offline Embedder based on feature hashing (the
// "hashing trick").
//
// A text is normalised (Unicode lower case; full-width forms, ligatures and
// Latin accents folded to ASCII; combining marks and apostrophes dropped;
// every other non-letter, non-digit rune separates words; each Han, Hiragana
// and Katakana rune is a word of its own). A tiny English stop-word list is
// removed unless nothing else is left, and a light suffix stripper maps
// plural and -ing/-ed forms onto a common stem. Three kinds of feature are
// then hashed with 64-bit FNV-1a, finalised with the SplitMix64 mixer:
//
//   - each stemmed content word (weight 1),
//   - each pair of adjacent stemmed content words (weight 0.6),
//   - each character 3-, 4- and 5-gram of "<word>", the unstemmed word with
//     boundary markers (weight 0.3).
//
// The hash picks the component (hash modulo Dims) and, by its top bit, the
// sign, so collisions cancel out on average instead of accumulating. A
// feature occurring tf times contributes weight·sqrt(tf) (sublinear term
// frequency), and the vector is L2-normalised, so the dot product of two
// vectors is their cosine similarity.
//
// The computation uses integer hashing, IEEE square roots and explicit
// float64 rounding (no fused multiply-add) in a fixed order, so the vectors
// are bit-identical on every platform and in every run; only runes
// assigned in a newer Unicode version than the Go release's tables may
// tokenise differently after a Go upgrade. Queries and documents are
// embedded identically.
//
// A text with no words (the empty string, only punctuation or spaces)
// yields the zero vector; callers computing cosine similarity must handle
// its zero norm.
//
// Hashing captures lexical similarity: shared words, stems and spelling
// variants. It does not know synonyms; use a neural model (package
// embeddings/openai) where meaning matters more than wording.
//
// A Hashing is immutable and safe for concurrent use.
type Hashing struct {
	dims int
	name string
	prf  cipher.Block // keyed: every feature hash goes through AES under a secret; nil when public
}

var _ Embedder = (*Hashing)(nil)

// NewUnkeyedHashing returns a hashing embedder producing vectors of dims
// components; dims < 1 selects DefaultHashingDims. Larger dims mean fewer
// collisions: 256 is adequate for short texts, 1024 or more suits long
// documents.
//
// Unkeyed: anyone can compute the vector of any text, so whoever reads the
// stored vectors can match them against a dictionary and recover the words
// of encrypted memories. Use NewKeyedHashing for data that must stay
// secret; this one suits tests, examples and public texts.
func NewUnkeyedHashing(dims int) *Hashing {
	if dims < 1 {
		dims = DefaultHashingDims
	}
	return &Hashing{dims: dims, name: "hash:" + strconv.Itoa(dims)}
}

// HashingKeySize is the length of the secret NewKeyedHashing takes.
const HashingKeySize = 16

// NewKeyedHashing returns a Hashing whose feature hashing is keyed by
// secret (HashingKeySize bytes, e.g. derived from the master key): each
// feature's 64-bit hash is passed through AES-128 under secret before it
// picks a component and a sign. Texts are compared exactly as by the public
// embedder — same words, stems and n-grams, same weights — so search
// quality is the same; but without secret nobody can compute the vector of
// a candidate text, so stored vectors can no longer be matched against a
// dictionary to recover the words of encrypted memories. keyID names the
// secret's origin (memvault passes its master key's id) and goes into Name,
// "hash:<dims>+keyed:<keyID>", so a store whose vectors were keyed by one
// key refuses to be searched with another.
func NewKeyedHashing(dims int, secret []byte, keyID string) (*Hashing, error) {
	if len(secret) != HashingKeySize {
		return nil, fmt.Errorf("embeddings: keyed hashing: secret of %d bytes, want %d", len(secret), HashingKeySize)
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, fmt.Errorf("embeddings: keyed hashing: %w", err)
	}
	h := NewUnkeyedHashing(dims)
	h.prf = block
	h.name += "+keyed:" + keyID
	return h, nil
}

// Keyed reports whether h's hashing is keyed (NewKeyedHashing).
func (h *Hashing) Keyed() bool { return h.prf != nil }

// keyedHash is the feature hash under h's key: AES-128 of the public hash,
// a pseudorandom function of the feature for whoever lacks the key.
// buf is the caller's block buffer (the scratch's, so that nothing is
// allocated per feature).
func (h *Hashing) keyedHash(buf *[aes.BlockSize]byte, x uint64) uint64 {
	clear(buf[:])
	binary.LittleEndian.PutUint64(buf[:8], x)
	h.prf.Encrypt(buf[:], buf[:])
	return binary.LittleEndian.Uint64(buf[:8])
}

// Dims returns the length of every vector h returns.
func (h *Hashing) Dims() int { return h.dims }

// Name returns "hash:<dims>", or "hash:<dims>+keyed:<key id>" when keyed.
func (h *Hashing) Name() string { return h.name }

// EmbedDocuments embeds each text; see Embed. It fails only when ctx is
// done.
func (h *Hashing) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.Embed(t)
	}
	return out, nil
}

// EmbedQuery embeds text exactly as EmbedDocuments would; it fails only
// when ctx is done.
func (h *Hashing) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.Embed(text), nil
}

// Embed returns the L2-normalised vector of text, or the zero vector when
// text has no words. It never fails.
func (h *Hashing) Embed(text string) []float32 {
	s := scratchPool.Get().(*scratch)
	defer s.release()
	s.reset()

	s.tokenize(text)
	out := make([]float32, h.dims)
	if len(s.words) == 0 {
		return out
	}
	s.features()

	acc := s.acc
	if cap(acc) < h.dims {
		acc = make([]float64, h.dims)
	}
	acc = acc[:h.dims]
	clear(acc)
	s.count()
	dims := uint64(h.dims)
	for _, slot := range s.order {
		f := s.table[slot]
		hash := f.hash
		if h.prf != nil {
			hash = h.keyedHash(&s.block, hash)
		}
		w := float64(channelWeights[f.channel] * math.Sqrt(float64(f.count)))
		if hash>>63 == 1 {
			w = -w
		}
		acc[hash%dims] += w
	}
	s.acc = acc

	var sum float64
	for _, v := range acc {
		sum += float64(v * v)
	}
	if sum == 0 {
		return out
	}
	norm := math.Sqrt(sum)
	for i, v := range acc {
		out[i] = float32(v / norm)
	}
	return out
}

// channelWeights are the weights of a feature's channel, by index.
var channelWeights = [3]float64{unigramWeight, bigramWeight, chargramWeight}

// feature is one distinct feature of a text and how often it occurs.
type feature struct {
	hash    uint64
	count   uint32 // 0 marks an empty slot
	channel uint8  // index into channelWeights
}

// count tallies the features of s.uni, s.bi and s.chr in the open-addressing
// table s.table and lists the slots of distinct features in s.order, in
// order of first occurrence: a deterministic order that, unlike sorting,
// costs linear time.
func (s *scratch) count() {
	n := len(s.uni) + len(s.bi) + len(s.chr)
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(s.table) < size {
		s.table = make([]feature, size)
	}
	s.table = s.table[:size]
	clear(s.table)
	s.order = s.order[:0]
	mask := uint64(size - 1)
	for ch, hashes := range [3][]uint64{s.uni, s.bi, s.chr} {
		for _, h := range hashes {
			slot := h & mask
			for {
				f := &s.table[slot]
				if f.count == 0 {
					*f = feature{hash: h, count: 1, channel: uint8(ch)}
					s.order = append(s.order, int32(slot))
					break
				}
				if f.hash == h && f.channel == uint8(ch) {
					f.count++
					break
				}
				slot = (slot + 1) & mask
			}
		}
	}
}

// span is a word's byte range in scratch.buf.
type span struct{ start, end int }

// scratch holds the reusable buffers of one Embed call.
type scratch struct {
	buf   []byte // normalised words, back to back
	words []span // words of buf, in text order
	stems []span // stems of the content words (subranges of words)
	gram  []byte // "<word>" for character n-grams
	runes []int  // rune offsets in gram
	uni   []uint64
	bi    []uint64
	chr   []uint64
	table []feature // see count
	order []int32   // slots of s.table in order of first occurrence
	acc   []float64
	block [aes.BlockSize]byte // keyed hashing's AES block
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledBytes bounds the normalised text a pooled scratch may keep, so
// that one huge text does not pin its buffers for the process's lifetime.
const maxPooledBytes = 1 << 20

// release returns s to the pool unless it grew too large to keep.
func (s *scratch) release() {
	if cap(s.buf) <= maxPooledBytes {
		scratchPool.Put(s)
	}
}

func (s *scratch) reset() {
	s.buf = s.buf[:0]
	s.words = s.words[:0]
	s.stems = s.stems[:0]
	s.uni = s.uni[:0]
	s.bi = s.bi[:0]
	s.chr = s.chr[:0]
}

// tokenize normalises text into s.buf and s.words.
func (s *scratch) tokenize(text string) {
	start := -1 // start of the current word in s.buf, or -1
	endWord := func() {
		if start >= 0 && len(s.buf) > start {
			s.words = append(s.words, span{start, len(s.buf)})
		}
		start = -1
	}
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf:
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			case r == '\'':
				continue
			default:
				endWord()
				continue
			}
			if start < 0 {
				start = len(s.buf)
			}
			s.buf = append(s.buf, byte(r))
			continue
		case r == '\u2019' || r == '\u02bc' || unicode.Is(unicode.Mn, r):
			// Typographic apostrophes join "don’t"; combining marks are
			// dropped, which folds decomposed accents.
			continue
		case isIdeograph(r):
			// Scripts written without spaces: every rune is a word, and
			// the bigram channel sees adjacent pairs.
			endWord()
			s.words = append(s.words, span{len(s.buf), len(s.buf)})
			s.buf = utf8.AppendRune(s.buf, r)
			s.words[len(s.words)-1].end = len(s.buf)
			continue
		}
		if f, ok := fold(r); ok {
			if f == "" {
				endWord()
				continue
			}
			if start < 0 {
				start = len(s.buf)
			}
			s.buf = append(s.buf, f...)
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			endWord()
			continue
		}
		if start < 0 {
			start = len(s.buf)
		}
		s.buf = utf8.AppendRune(s.buf, unicode.ToLower(r))
	}
	endWord()
}

// features hashes the unigrams, bigrams and character n-grams of s.words.
func (s *scratch) features() {
	content := 0
	for _, w := range s.words {
		if !stopwords[string(s.buf[w.start:w.end])] {
			content++
		}
	}
	keepAll := content == 0
	for _, w := range s.words {
		word := s.buf[w.start:w.end]
		if !keepAll && stopwords[string(word)] {
			continue
		}
		st := w
		st.end = w.start + stemLen(word)
		s.stems = append(s.stems, st)
		s.chargrams(word)
	}
	for i, st := range s.stems {
		h := hashAdd(fnvOffset, tagUnigram)
		h = hashBytes(h, s.buf[st.start:st.end])
		s.uni = append(s.uni, mix(h))
		if i > 0 {
			prev := s.stems[i-1]
			h = hashAdd(fnvOffset, tagBigram)
			h = hashBytes(h, s.buf[prev.start:prev.end])
			h = hashAdd(h, ' ')
			h = hashBytes(h, s.buf[st.start:st.end])
			s.bi = append(s.bi, mix(h))
		}
	}
}

// chargrams appends the hashes of the character n-grams of "<word>".
func (s *scratch) chargrams(word []byte) {
	s.gram = append(append(append(s.gram[:0], '<'), word...), '>')
	s.runes = s.runes[:0]
	for i := range string(s.gram) {
		s.runes = append(s.runes, i)
	}
	s.runes = append(s.runes, len(s.gram))
	nr := len(s.runes) - 1
	for n := minGram; n <= maxGram; n++ {
		for i := 0; i+n <= nr; i++ {
			h := hashAdd(fnvOffset, tagChargram)
			h = hashBytes(h, s.gram[s.runes[i]:s.runes[i+n]])
			s.chr = append(s.chr, mix(h))
		}
	}
}

// stemLen returns the length of word's stem: without a plural, -ing or -ed
// suffix, then without a final "e" or "y". It is deliberately crude: it only
// needs to map inflections of one word onto the same prefix ("store",
// "stores", "stored", "storing" -> "stor"; "query", "queries" -> "quer"),
// not to produce dictionary stems.
func stemLen(word []byte) int {
	n := len(word)
	has := func(suffix string) bool {
		return n >= len(suffix) && string(word[n-len(suffix):]) == suffix
	}
	switch {
	case n >= 6 && (has("ies") || has("ied")):
		n -= 3
	case n >= 6 && has("ing"):
		n -= 3
	case n >= 5 && has("ed"):
		n -= 2
	case n >= 4 && has("s") && !has("ss") && !has("us") && !has("is"):
		n--
	}
	if n >= 4 && (word[n-1] == 'e' || word[n-1] == 'y') {
		n--
	}
	return n
}

// isIdeograph reports runes of scripts written without spaces between
// words.
func isIdeograph(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// fold maps compatibility and accented forms onto plain lower-case ASCII.
// It reports ok=false for runes it leaves alone; an empty result means the
// rune separates words.
func fold(r rune) (string, bool) {
	switch {
	case 0xFF01 <= r && r <= 0xFF5E: // full-width ASCII
		a := byte(r - 0xFEE0)
		switch {
		case 'A' <= a && a <= 'Z':
			return string(rune(a + 'a' - 'A')), true
		case 'a' <= a && a <= 'z', '0' <= a && a <= '9':
			return asciiStrings[a], true
		}
		return "", true
	case 0xC0 <= r && r <= 0xFF:
		switch r {
		case 'Æ', 'æ':
			return "ae", true
		case 'Þ', 'þ':
			return "th", true
		case 'ß':
			return "ss", true
		case '×', '÷':
			return "", true
		}
		return asciiStrings[latin1Fold[r-0xC0]], true
	case 0x100 <= r && r <= 0x17F:
		switch r {
		case 'Œ', 'œ':
			return "oe", true
		case 'Ĳ', 'ĳ':
			return "ij", true
		}
		return asciiStrings[latinExtAFold[r-0x100]], true
	case 0xFB00 <= r && r <= 0xFB06:
		return ligatures[r-0xFB00], true
	}
	return "", false
}

// latin1Fold maps U+00C0..U+00FF to ASCII letters; '.' marks runes fold
// handles itself.
const latin1Fold = "aaaaaa.ceeeeiiiidnooooo.ouuuuy.." +
	"aaaaaa.ceeeeiiiidnooooo.ouuuuy.y"

// latinExtAFold maps U+0100..U+017F to ASCII letters; '.' marks runes fold
// handles itself.
const latinExtAFold = "aaaaaa" + "cccccccc" + "dddd" + "eeeeeeeeee" + "gggggggg" + "hhhh" +
	"iiiiiiiiii" + ".." + "jj" + "kkk" + "llllllllll" + "nnnnnnnnn" + "oooooo" + ".." +
	"rrrrrr" + "ssssssss" + "tttttt" + "uuuuuuuuuuuu" + "ww" + "yyy" + "zzzzzz" + "s"

var ligatures = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}

// asciiStrings holds one-byte strings so fold does not allocate.
var asciiStrings = func() (a [128]string) {
	for i := range a {
		a[i] = string(rune(i))
	}
	return a
}()

// stopwords are English function words that carry little topical meaning.
// Negations are kept: they change what a sentence says.
var stopwords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range []string{
		"a", "an", "the", "and", "or", "but", "if", "then", "than", "so",
		"of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "into",
		"about", "over", "after", "before",
		"is", "are", "was", "were", "be", "been", "being", "am",
		"do", "does", "did", "has", "have", "had",
		"will", "would", "can", "could", "should", "shall", "may", "might", "must",
		"it", "its", "this", "that", "these", "those", "there", "here",
		"i", "me", "my", "we", "us", "our", "you", "your",
		"he", "him", "his", "she", "her", "they", "them", "their",
		"what", "which", "who", "whom", "very", "just", "also", "too",
	} {
		m[w] = true
	}
	return m
}()

// FNV-1a 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashAdd(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func hashBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// mix is the SplitMix64 finaliser; it spreads FNV's weak low bits over the
// whole word so that both the modulo and the sign bit are well distributed.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

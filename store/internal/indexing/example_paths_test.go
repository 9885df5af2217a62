package indexing_test

import (
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/store"
)

func ExampleExtractTexts() {
	value := map[string]any{
		"title": "Trip notes",
		"stars": 4.0,
		"tags":  []any{"travel", "food"},
		"meta":  map[string]any{"lang": "en", "draft": false},
	}
	texts, _ := indexing.ExtractTexts(value, []string{"title", "stars", "tags[*]", "{meta.lang,meta.draft}"})
	for _, ft := range texts {
		fmt.Printf("%s = %q\n", ft.Field, ft.Text)
	}

	fmt.Printf("cosine: %.4f\n", indexing.Score(store.Cosine, []float32{1, 1}, []float32{1, 0}))
	// Output:
	// title = "Trip notes"
	// stars = "4.0"
	// tags[*].0 = "travel"
	// tags[*].1 = "food"
	// {meta.lang,meta.draft}.0 = "en"
	// {meta.lang,meta.draft}.1 = "False"
	// cosine: 0.7071
}

func ExampleParsePath() {
	p, err := indexing.ParsePath("items[-1].name")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Texts(map[string]any{"items": []any{
		map[string]any{"name": "first"}, map[string]any{"name": "last"},
	}}))
	_, err = indexing.ParsePath("items[x]")
	fmt.Println(err)
	// Output:
	// [last]
	// store: invalid field path: "items[x]": index "x" is not an integer or '*'
}

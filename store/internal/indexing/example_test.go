package indexing_test

import (
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"
)

// The texts of a value that an index path selects, as LangGraph's
// get_text_at_path gives them.
func Example() {
	value := map[string]any{"tags": []any{"food", "allergy"}, "note": map[string]any{"text": "peanuts"}}
	texts, err := indexing.ExtractTexts(value, []string{"note.text", "tags[*]"})
	if err != nil {
		panic(err)
	}
	for _, t := range texts {
		fmt.Printf("%s=%s\n", t.Field, t.Text)
	}
	// Output:
	// note.text=peanuts
	// tags[*].0=food
	// tags[*].1=allergy
}

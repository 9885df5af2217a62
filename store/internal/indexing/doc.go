// Package indexing is what the store embeds and how it scores: field
// paths (ParsePath) and the texts they select from a value (ExtractTexts,
// byte-identical to LangGraph's get_text_at_path, with Python's formatting
// of leaves in PythonJSON), the bound on an indexed text (IndexedText), the
// embedder calls and their checks (EmbedDocuments, EmbedQuery,
// CheckEmbedder, CheckReembedTarget), and the scores LangGraph reports for
// cosine, L2 and inner-product distances (Score, QueryScorer).
package indexing

// Package filtering is the store's search filter language, once for every
// backend: a filter is a JSON object whose fields must equal the item's
// (JSON equality, numbers compared as numbers) or satisfy an operator
// ($eq $ne $gt $gte $lt $lte). CompileFilter checks a filter up front, and
// the compiled Filter matches values in memory; PostgreSQL turns the same
// checked filter into SQL.
package filtering

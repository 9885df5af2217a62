// Package rotate is the engine behind every backend's Reencrypt (the last
// step of a key rotation): it pages through a table's value rows in primary
// key order, reseals each value that is not under the primary key, and
// writes the changed rows back a batch at a time. Backends supply the SQL
// (fetch one page, update changed rows); rotate supplies the loop, the
// counting and the progress reports, so the four SQL backends rotate the
// same way.
package rotate

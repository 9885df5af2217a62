// Package mongoindex holds what the MongoDB saver and store both need to
// know about a collection's indexes.
package mongoindex

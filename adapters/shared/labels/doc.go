// Package labels turns a framework's names (app names, user ids, session
// ids) into store namespace labels and back. A label may not contain '.',
// so '.' is escaped as "%2E" and '%' as "%25"; every other byte is kept,
// and distinct names give distinct labels. The adapters under
// github.com/memvault/memvault/adapters share it, so that their layouts
// agree.
//
// It exists for memvault's adapters, and is exported only because each
// adapter is a module of its own; it is not meant for other callers.
package labels

// Package relocate moves store items from where an older layout of an
// adapter kept them to where the adapter keeps them now, while both are
// read: Get reads the new place and falls back on the old one, Update
// writes the new place and deletes the old item once its value has moved,
// and Move moves every item left in the old places at once. The ADK and
// tRPC-Agent-Go adapters use it for user state, which moved from one item
// per user in a namespace per app (under no subject) to a namespace per
// user (under the user's subject).
//
// It exists for memvault's adapters, and is exported only because each
// adapter is a module of its own; it is not meant for other callers.
package relocate

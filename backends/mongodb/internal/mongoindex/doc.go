// Package mongoindex holds what the MongoDB saver and store both need to
// know about a collection's indexes: whether one already serves a key,
// under whatever name Python, JS or a person gave it, so that Setup makes
// no second index on the same fields. It only reads index lists: which
// indexes each package needs, and creating them, stay with that package's
// Setup (backends/mongodb/mongosaver, backends/mongodb/mongostore).
package mongoindex

// Package spaces keeps each data subject's store vectors in a vector space
// of its own: the store core rotates a subject's vectors, as they are
// written, by a secret rotation that only the subject's keys select
// (keys.Hierarchy.SubjectRotation), and a search compares its query with
// them in that space, so that once the subject's keys are destroyed no copy
// of its vectors, nor of the codes a store derives from them, can be
// compared with anything computed from the master key. A rotation keeps
// every inner product, so scores and rankings are unchanged.
//
// Items of no subject stay in the shared space (their vectors as the
// store's embedder makes them). A search under one subject's namespace, or
// under a namespace that holds no subject's items, meets one space and
// runs as before with its query rotated once; a search whose prefix spans
// several subjects (("users") or the root, say) meets one space per subject
// and compares each vector with the query of its own space (Query.For,
// PerSpace).
package spaces

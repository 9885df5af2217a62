// Package depcheck holds no code: its tests check the dependency rules of
// the repository (issue 26, "Dependency direction") — no module imports
// another module's internal packages, the contracts stay apart, and the
// contract packages import no database driver — so that a change which
// breaks one fails `make test` instead of waiting for review.
package depcheck

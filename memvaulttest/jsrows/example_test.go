package jsrows_test

import (
	"fmt"
	"strings"

	"github.com/memvault/memvault/memvaulttest/jsrows"
)

// Statements splits a dump such as JSRowsSQL into the statements Exec runs.
func ExampleStatements() {
	script := `-- rows written by JS LangGraph
CREATE TABLE checkpoint_migrations (
    v integer NOT NULL,
    PRIMARY KEY (v)
);
INSERT INTO checkpoint_migrations (v) VALUES ('0');
`
	for _, stmt := range jsrows.Statements(script) {
		fmt.Println(strings.Fields(stmt)[0], len(strings.Split(stmt, "\n")), "line(s)")
	}
	fmt.Println(len(jsrows.Statements(jsrows.JSRowsSQL)) > 0)
	// Output:
	// CREATE 4 line(s)
	// INSERT 1 line(s)
	// true
}

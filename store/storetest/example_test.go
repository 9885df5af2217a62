package storetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/store/storetest"
)

func ExampleAxisEmbedder() {
	e := storetest.NewAxisEmbedder(storetest.Vocabulary...)
	v, _ := e.EmbedQuery(context.Background(), "Apple pie with banana, apple crumble")
	fmt.Println(e.Name(), v)
	// Output: axis:4 [2 1 0 0]
}

func ExampleClock() {
	c := storetest.NewClock()
	c.Advance(90 * time.Second)
	fmt.Println(c.Now().Sub(storetest.Epoch))
	// Output: 1m30s
}

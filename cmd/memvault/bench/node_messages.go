package bench

import (
	"context"
	"fmt"
)

// startJSMessages starts JS LangGraph's PostgresSaver on env's schema for
// the growing-messages workload: node seeds its own threads of 50 and 200
// steps with the same messages and measures put_messages,
// get_messages_50 and get_messages_200 as the Go side does.
func startJSMessages(ctx context.Context, dir string, be *shapeBackend, env *cpEnv, f msgFixture) (*jsBench, error) {
	if env.pool == nil {
		return nil, fmt.Errorf("--js: %s has no PostgreSQL schema", be.name)
	}
	js, err := startJSBench(ctx, dir, env.pool, env.schema, max(1, int(env.pool.Config().MaxConns)/2), newCPFixture().values)
	if err != nil {
		return nil, err
	}
	var ok struct {
		OK bool `json:"ok"`
	}
	init := map[string]any{"cmd": "init_messages", "steps": messagesSteps,
		"fixture": map[string]any{"messages": f.msgs, "context": f.context, "summary": f.summary}}
	if err := js.call(init, &ok); err != nil {
		_ = js.Close()
		return nil, err
	}
	return js, nil
}

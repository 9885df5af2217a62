package pgdb

import (
	"context"
	"sync/atomic"
)

// Probe is a yes-or-no question about the server (an extension, a setting)
// asked once: the first answer is kept for the life of the value, and a
// question that failed is asked again the next time.
type Probe struct {
	state atomic.Int32 // 0 not asked yet, 1 no, 2 yes
}

// Ask returns the kept answer or asks sql, a statement returning one
// boolean, on q.
func (p *Probe) Ask(ctx context.Context, q Querier, sql string) (bool, error) {
	switch p.state.Load() {
	case 1:
		return false, nil
	case 2:
		return true, nil
	}
	var ok bool
	if err := q.QueryRow(ctx, sql).Scan(&ok); err != nil {
		return false, err
	}
	if ok {
		p.state.Store(2)
	} else {
		p.state.Store(1)
	}
	return ok, nil
}

// Yes reports whether the kept answer is yes, without asking: false until
// asked.
func (p *Probe) Yes() bool { return p.state.Load() == 2 }

package postgres

import "strconv"

// vectorText renders a vector in pgvector's text form, "[1,2.5,-3]", cast to
// vector or halfvec in SQL. Text works with any pool, without registering
// pgvector's types on its connections, and in every pgx exec mode.
func vectorText(v []float32) string {
	b := make([]byte, 0, 2+len(v)*10)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

package indexing

// dot accumulates in float32 like pgvector, four lanes at a time.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func sqDist(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}

func dotNorms(a, b []float32) (d, na, nb float32) {
	b = b[:len(a)]
	var d1, na1, nb1 float32
	i := 0
	for ; i+2 <= len(a); i += 2 {
		x0, y0, x1, y1 := a[i], b[i], a[i+1], b[i+1]
		d += x0 * y0
		na += x0 * x0
		nb += y0 * y0
		d1 += x1 * y1
		na1 += x1 * x1
		nb1 += y1 * y1
	}
	for ; i < len(a); i++ {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return d + d1, na + na1, nb + nb1
}

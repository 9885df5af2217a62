package durable_test

func crashChild() bool { return false }

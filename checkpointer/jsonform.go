package checkpointer

// TimeLayout is how checkpoint timestamps are written: Python's
// datetime.isoformat() of a UTC time with microseconds.
const TimeLayout = "2006-01-02T15:04:05.000000-07:00"

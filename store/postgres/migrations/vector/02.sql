{vector_index}

package store

// Store keeps values by key.
type Store struct {
	m map[string]string
}

// New makes an empty Store.
func New() *Store {
	return &Store{m: map[string]string{}}
}

// Get returns the value of k.
func (s *Store) Get(k string) string {
	return s.m[k]
}

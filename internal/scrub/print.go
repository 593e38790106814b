package scrub

import "fmt"

// Nothing of a Set or a Stream prints: the values, their forms and the
// bytes a Stream holds back stay inside. Every verb gives the type's name.

// String names the type.
func (Set) String() string { return "scrub.Set" }

// GoString names the type.
func (Set) GoString() string { return "scrub.Set" }

// Format names the type, for every verb.
func (Set) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("scrub.Set")) }

// String names the type.
func (Stream) String() string { return "scrub.Stream" }

// GoString names the type.
func (Stream) GoString() string { return "scrub.Stream" }

// Format names the type, for every verb.
func (Stream) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("scrub.Stream")) }

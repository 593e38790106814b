// Command answer is the cheapest persistent PDP there is: it answers every
// request line on stdin with a constant allow on stdout. The benchmarks
// build it to measure what arca adds to a round trip through a child's
// pipes when the child itself costs next to nothing.
package main

import (
	"bufio"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	verdict := []byte("{\"allow\":true}\n")
	for {
		_, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue // the rest of a long line
		}
		if err != nil {
			return
		}
		if _, err := os.Stdout.Write(verdict); err != nil {
			return
		}
	}
}

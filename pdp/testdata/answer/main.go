// Command answer is the cheapest persistent PDP there is: it answers every
// request line on stdin with a constant allow on stdout, echoing the
// line's nonce. The benchmarks build it to measure what arca adds to a
// round trip through a child's pipes when the child itself costs next to
// nothing.
package main

import (
	"bufio"
	"bytes"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	key := []byte(`"nonce":"`)
	verdict := []byte(`{"allow":true,"nonce":"`)
	for {
		line, err := in.ReadSlice('\n')
		for err == bufio.ErrBufferFull { // a long line: the nonce is its last key
			line, err = in.ReadSlice('\n')
		}
		if err != nil {
			return
		}
		nonce := line[:0]
		if i := bytes.LastIndex(line, key); i >= 0 {
			nonce = line[i+len(key):]
			nonce = nonce[:max(bytes.IndexByte(nonce, '"'), 0)]
		}
		out := append(append(verdict[:len(verdict):len(verdict)], nonce...), "\"}\n"...)
		if _, err := os.Stdout.Write(out); err != nil {
			return
		}
	}
}

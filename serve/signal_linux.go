package serve

import (
	"os"
	"syscall"
)

// platformStopSignals are the stop signals this system alone has.
func platformStopSignals() []os.Signal { return []os.Signal{syscall.SIGSTKFLT} }
